package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// The task index (task-index/) lets pm task, pm status and the "only active
// task" lookups read the live tasks without reading every finished one:
// constant in the number of finished tasks. It is a cache of the task files,
// which stay the truth:
//
//	task-index/complete      empty: the index covers every task (Init, reset, rebuild)
//	task-index/live/tk-ID    empty: the task is active or blocked
//	task-index/done/tk-ID    empty: the task is done
//	task-index/killed/tk-ID  empty: the task is killed
//
// Invariant: a task whose file says class C has a marker in C. Every write
// of a task that changes its class (WriteTask, UpdateTask) creates the new
// marker before the file and removes the old one after it, both under the
// task file's lock, so a process killed between the steps leaves at worst a
// second, stale marker, never a missing one. Readers check the markers
// against the files: a live marker is kept only when its task reads live
// (so the active-task limit stays exact), and a finished marker of a task
// that reads live is not counted; both are repaired (reindexTask) by every
// list of the live tasks. Such a stale marker is derived away, so pm doctor
// --check does not count it (CheckTaskIndex): only a missing one. A
// live marker without task.json is a creation killed before its record,
// removed only under tasks.lock, where no creation is in flight. Class
// changes run under tasks.lock (create, done, kill, restart, reset), so the
// rebuild, which also holds it, sees none half done. Without
// task-index/complete (a state from before the index, or a rebuild killed
// midway) readers fall back to the full scan and a holder of tasks.lock
// rebuilds it; pm status --all rebuilds it when its full scan disagrees.

const (
	indexLive     = "live"
	indexComplete = "complete"
)

func (s *Store) taskIndexDir() string { return filepath.Join(s.Root, "task-index") }

// indexClass is the index directory of a status; "" for a status pm never
// writes (a hand-edited file), which has no marker.
func indexClass(st TaskStatus) string {
	switch st {
	case TaskActive, TaskBlocked:
		return indexLive
	case TaskDone, TaskKilled:
		return string(st)
	}
	return ""
}

func (s *Store) indexMarker(class, id string) string {
	return filepath.Join(s.taskIndexDir(), class, id)
}

// markTask records that id's file says st (before that file is written).
func (s *Store) markTask(id string, st TaskStatus) error {
	class := indexClass(st)
	if class == "" {
		return nil
	}
	p := s.indexMarker(class, id)
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := touch(p); err != nil {
		return err
	}
	crashpoint.Hit("task.indexed")
	return nil
}

// unmarkTask removes id's marker in the class of st (after the file moved on).
func (s *Store) unmarkTask(id string, st TaskStatus) error {
	class := indexClass(st)
	if class == "" {
		return nil
	}
	if err := os.Remove(s.indexMarker(class, id)); err != nil && !os.IsNotExist(err) {
		return err
	}
	crashpoint.Hit("task.unindexed")
	return nil
}

func touch(p string) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			f, err = os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
		}
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func (s *Store) taskIndexComplete() bool {
	_, err := os.Stat(filepath.Join(s.taskIndexDir(), indexComplete))
	return err == nil
}

// writeTaskIndexComplete marks the index as covering every task.
func (s *Store) writeTaskIndexComplete() error {
	return touch(filepath.Join(s.taskIndexDir(), indexComplete))
}

// rebuildTaskIndexHeld rewrites the index from the task files; the caller
// holds tasks.lock. complete is written last: a rebuild killed midway is
// redone by the next one.
func (s *Store) rebuildTaskIndexHeld() error {
	if err := os.RemoveAll(s.taskIndexDir()); err != nil {
		return err
	}
	tasks, err := s.Tasks()
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if err := s.markTask(t.ID, t.Status); err != nil {
			return err
		}
	}
	return s.writeTaskIndexComplete()
}

// RepairTaskIndex rebuilds the task index from the task files, under
// tasks.lock.
func (s *Store) RepairTaskIndex() error {
	return s.WithTasksLock(s.rebuildTaskIndexHeld)
}

// RepairTaskIndexHeld makes the task index whole; the caller holds
// tasks.lock. An index a crash left incomplete is rebuilt; a live marker
// whose task has no file (a creation killed between its marker and its
// record) is dropped, which only the lock's holder may do: a creation
// in flight has no file yet either. It reads no task file.
func (s *Store) RepairTaskIndexHeld() error {
	if !s.taskIndexComplete() {
		return s.rebuildTaskIndexHeld()
	}
	names, err := indexNames(filepath.Join(s.taskIndexDir(), indexLive))
	if err != nil {
		return err
	}
	for _, id := range names {
		if !s.TaskPathExists(id) {
			_ = s.unmarkTask(id, TaskActive)
		}
	}
	return nil
}

// reindexTask makes id's markers fit its file, under the file's lock: its
// class marker present, the others gone.
func (s *Store) reindexTask(id string) error {
	p := s.TaskPath(id)
	return lockedfile.With(p, func() error {
		var t Task
		if err := lockedfile.ReadJSON(p, &t); err != nil {
			return err
		}
		if err := s.markTask(id, t.Status); err != nil {
			return err
		}
		for _, c := range []TaskStatus{TaskActive, TaskDone, TaskKilled} {
			if indexClass(c) != indexClass(t.Status) {
				if err := s.unmarkTask(id, c); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// indexedLiveTasks reads the tasks the live markers name and keeps those
// whose files say live, oldest first, repairing stale markers: a live
// marker of a finished task, a finished marker of a live task (a pm done
// killed between its done marker and task.json: two lstats per live task),
// and a live marker without task.json only when held (tasks.lock is held,
// no creation is in flight).
func (s *Store) indexedLiveTasks(held bool) ([]*Task, error) {
	names, err := indexNames(filepath.Join(s.taskIndexDir(), indexLive))
	if err != nil {
		return nil, err
	}
	tasks := readRecords[Task](s, "task", names, s.TaskPath, nil)
	found := make(map[string]bool, len(tasks))
	live := tasks[:0]
	for _, t := range tasks {
		found[t.ID] = true
		if !t.Live() || s.finishedMarker(t.ID) {
			_ = s.reindexTask(t.ID) // best effort: a reader still filters it
		}
		if t.Live() {
			live = append(live, t)
		}
	}
	if held {
		for _, id := range names {
			if !found[id] && !s.TaskPathExists(id) {
				_ = s.unmarkTask(id, TaskActive)
			}
		}
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].CreatedAt.Before(live[j].CreatedAt) })
	return live, nil
}

// finishedMarker reports whether id has a done or killed marker.
func (s *Store) finishedMarker(id string) bool {
	for _, c := range []TaskStatus{TaskDone, TaskKilled} {
		if _, err := os.Lstat(s.indexMarker(string(c), id)); err == nil {
			return true
		}
	}
	return false
}

// isTaskIDBytes is ids.Parse(ids.Task, name) == nil without a string.
func isTaskIDBytes(name []byte) bool {
	if len(name) != 9 || string(name[:3]) != ids.Task+"-" {
		return false
	}
	for _, c := range name[3:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// TaskPathExists reports whether id has a task.json.
func (s *Store) TaskPathExists(id string) bool {
	_, err := os.Lstat(s.TaskPath(id))
	return err == nil
}

// indexNames lists the task ids in dir (a missing dir is empty); counting
// without listing is countTaskIDs.
func indexNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	for {
		batch, err := f.Readdirnames(1024)
		for _, n := range batch {
			if ids.Parse(ids.Task, n) != nil {
				continue
			}
			out = append(out, n)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// LiveTasksHeld is LiveTasks for a caller holding tasks.lock (pm task's
// limit check, Settle): it builds the index when it is not complete and
// removes the markers of creations killed before their record.
func (s *Store) LiveTasksHeld() ([]*Task, error) {
	if !s.taskIndexComplete() {
		if err := s.rebuildTaskIndexHeld(); err != nil {
			return nil, err
		}
	}
	return s.indexedLiveTasks(true)
}

// TaskCounts is the live tasks, oldest first, and the number of tasks of
// each status, read from the index: the live tasks are read, the finished
// ones only counted. ok is false when the index is not complete (the caller
// then scans).
func (s *Store) TaskCounts() (live []*Task, counts map[TaskStatus]int, ok bool, err error) {
	if !s.taskIndexComplete() {
		return nil, nil, false, nil
	}
	if live, err = s.indexedLiveTasks(false); err != nil {
		return nil, nil, false, err
	}
	counts = map[TaskStatus]int{}
	stale := map[TaskStatus]int{} // finished markers of live tasks reindexTask could not remove
	for _, t := range live {
		counts[t.Status]++
		for _, c := range []TaskStatus{TaskDone, TaskKilled} {
			if _, err := os.Lstat(s.indexMarker(string(c), t.ID)); err != nil {
				continue
			}
			_ = s.reindexTask(t.ID) // a restart killed before it dropped the old marker
			if _, err := os.Lstat(s.indexMarker(string(c), t.ID)); err == nil {
				stale[c]++
			}
		}
	}
	for _, c := range []TaskStatus{TaskDone, TaskKilled} {
		n, err := countTaskIDs(filepath.Join(s.taskIndexDir(), string(c)))
		if err != nil {
			return nil, nil, false, err
		}
		if n -= stale[c]; n > 0 {
			counts[c] = n
		}
	}
	return live, counts, true, nil
}
