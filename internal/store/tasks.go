package store

import (
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

// WriteTask creates a task file. The caller owns the new id.
func (s *Store) WriteTask(t *Task) error {
	if err := os.MkdirAll(s.PhasesDir(t.ID), 0o755); err != nil {
		return err
	}
	p := s.TaskPath(t.ID)
	return lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, t) })
}

// UpdateTask runs fn on the task under its lock and writes it back.
func (s *Store) UpdateTask(id string, fn func(t *Task) error) (*Task, error) {
	if _, err := s.Task(id); err != nil {
		return nil, err
	}
	t, err := lockedfile.Update(s.TaskPath(id), false, fn)
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
// and skipped so one bad file does not hide the rest. Reads run in parallel:
// with thousands of tasks the cost is syscalls, not parsing.
func (s *Store) Tasks() ([]*Task, error) {
	idList, err := s.TaskIDs()
	if err != nil {
		return nil, err
	}
	out := make([]*Task, len(idList))
	errsSeen := make([]error, len(idList))
	var wg sync.WaitGroup
	next := make(chan int, len(idList))
	for i := range idList {
		next <- i
	}
	close(next)
	workers := min(runtime.GOMAXPROCS(0)*2, max(1, len(idList)))
	for range workers {
		wg.Go(func() {
			for i := range next {
				var t Task
				if err := lockedfile.ReadJSON(s.TaskPath(idList[i]), &t); err != nil {
					errsSeen[i] = err
					continue
				}
				out[i] = &t
			}
		})
	}
	wg.Wait()
	tasks := out[:0]
	for i, t := range out {
		if t == nil {
			if !os.IsNotExist(errsSeen[i]) {
				s.Warnf("skipped task %s: %v", idList[i], errsSeen[i])
			}
			continue
		}
		tasks = append(tasks, t)
	}
	sort.SliceStable(tasks, func(i, j int) bool { return tasks[i].CreatedAt.Before(tasks[j].CreatedAt) })
	return tasks, nil
}

// TaskDirExists reports whether id names a task directory (used to pick fresh ids).
func (s *Store) TaskDirExists(id string) bool {
	_, err := os.Stat(filepath.Join(s.TasksDir(), id))
	return err == nil
}
