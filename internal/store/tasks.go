package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// Task reads one task. An unknown or malformed id is exit 4 / exit 2.
func (s *Store) Task(id string) (*Task, error) {
	if err := ids.Parse(ids.Task, id); err != nil {
		return nil, errs.Usagef("task ids look like tk-a1b2c3; see 'pm status'", "%v", err)
	}
	var t Task
	if err := lockedfile.ReadJSON(s.TaskPath(id), &t); err != nil {
		return nil, notFound(err, "see 'pm status' for the tasks that exist", "no task %s", id)
	}
	return &t, nil
}

// ErrCorrupt is a record whose file is not valid JSON.
var ErrCorrupt = lockedfile.ErrMalformed

// WriteTask creates a task file. The caller owns the new id. Its index
// marker comes first (taskindex.go).
func (s *Store) WriteTask(t *Task) error {
	if err := os.MkdirAll(s.PhasesDir(t.ID), 0o755); err != nil {
		return err
	}
	p := s.TaskPath(t.ID)
	return lockedfile.With(p, func() error {
		if err := s.markTask(t.ID, t.Status); err != nil {
			return err
		}
		return lockedfile.WriteJSON(p, t)
	})
}

// UpdateTask runs fn on the task under its lock and writes it back. When
// the status changes class, the new index marker is written before the
// file and the old one removed after it, under the same lock.
func (s *Store) UpdateTask(id string, fn func(t *Task) error) (*Task, error) {
	if _, err := s.Task(id); err != nil {
		return nil, err
	}
	p := s.TaskPath(id)
	var t Task
	err := lockedfile.With(p, func() error {
		if err := lockedfile.ReadJSON(p, &t); err != nil {
			return err
		}
		old := t.Status
		if err := fn(&t); err != nil {
			if errors.Is(err, lockedfile.ErrUnchanged) {
				return nil
			}
			return err
		}
		moved := indexClass(old) != indexClass(t.Status)
		if moved {
			if err := s.markTask(id, t.Status); err != nil {
				return err
			}
		}
		if err := lockedfile.WriteJSON(p, &t); err != nil || !moved {
			return err
		}
		return s.unmarkTask(id, old)
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// TaskIDs lists the ids of every task directory, sorted.
func (s *Store) TaskIDs() ([]string, error) {
	ents, err := os.ReadDir(s.TasksDir())
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), ids.Task+"-") && ids.Parse(ids.Task, e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Tasks reads every task, oldest first. Unreadable task files are reported
// and skipped so one bad file does not hide the rest.
func (s *Store) Tasks() ([]*Task, error) {
	idList, err := s.TaskIDs()
	if err != nil {
		return nil, err
	}
	tasks := readRecords[Task](s, "task", idList, s.TaskPath, nil)
	sort.SliceStable(tasks, func(i, j int) bool { return tasks[i].CreatedAt.Before(tasks[j].CreatedAt) })
	return tasks, nil
}

// LiveTasks reads the active and blocked tasks, oldest first: what the
// commands that pick "the only active task or phase" need. It reads the
// tasks the index marks live (taskindex.go); without a complete index it
// scans (scanLiveTasks).
func (s *Store) LiveTasks() ([]*Task, error) {
	if s.taskIndexComplete() {
		return s.indexedLiveTasks(false)
	}
	return s.scanLiveTasks()
}

// scanLiveTasks reads every task file but decodes only those that mention a
// live status (pm writes records with encoding/json, which never escapes
// these words), so it costs far less than Tasks when most tasks are
// finished.
func (s *Store) scanLiveTasks() ([]*Task, error) {
	idList, err := s.TaskIDs()
	if err != nil {
		return nil, err
	}
	active, blocked := []byte(`"`+TaskActive+`"`), []byte(`"`+TaskBlocked+`"`)
	mention := func(raw []byte) bool { return bytes.Contains(raw, active) || bytes.Contains(raw, blocked) }
	tasks := readRecords[Task](s, "task", idList, s.TaskPath, mention)
	live := tasks[:0]
	for _, t := range tasks {
		if t.Live() {
			live = append(live, t)
		}
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].CreatedAt.Before(live[j].CreatedAt) })
	return live, nil
}

// readRecords reads the JSON record path(name) of every name in parallel:
// with thousands of records the cost is syscalls, not parsing. It returns
// them in names order, skipping missing files silently and reporting
// unreadable ones as kind NAME. When keep is not nil, a record whose raw
// bytes keep rejects is skipped before it is decoded.
func readRecords[T any](s *Store, kind string, names []string, path func(string) string, keep func(raw []byte) bool) []*T {
	recs, _ := readRecordsBad[T](s, kind, names, path, keep)
	return recs
}

// readRecordsBad is readRecords that also returns the names whose record
// is there but cannot be read (reported through s.Warnf as well).
func readRecordsBad[T any](s *Store, kind string, names []string, path func(string) string, keep func(raw []byte) bool) ([]*T, []string) {
	out := make([]*T, len(names))
	errsSeen := make([]error, len(names))
	var wg sync.WaitGroup
	next := make(chan int, len(names))
	for i := range names {
		next <- i
	}
	close(next)
	workers := min(runtime.GOMAXPROCS(0)*2, max(1, len(names)))
	for range workers {
		wg.Go(func() {
			for i := range next {
				var v T
				err := lockedfile.ReadJSONIf(path(names[i]), &v, keep)
				if err != nil {
					errsSeen[i] = err
					continue
				}
				out[i] = &v
			}
		})
	}
	wg.Wait()
	recs := out[:0]
	var bad []string
	for i, v := range out {
		switch {
		case v != nil:
			recs = append(recs, v)
		case errsSeen[i] == lockedfile.ErrSkipped || os.IsNotExist(errsSeen[i]):
		default:
			s.Warnf("skipped %s %s: %v", kind, names[i], errsSeen[i])
			bad = append(bad, names[i])
		}
	}
	return recs, bad
}

// TaskDirExists reports whether id names a task directory (used to pick fresh ids).
func (s *Store) TaskDirExists(id string) bool {
	_, err := os.Stat(filepath.Join(s.TasksDir(), id))
	return err == nil
}
