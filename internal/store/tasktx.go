package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/watch"
)

// WithTasksLock runs fn holding tasks.lock, the first lock of the order:
// creating and linking tasks, pm done's checks and mark, marking a tree
// killed and resetting all run under it, so none of them sees another half
// done.
func (s *Store) WithTasksLock(fn func() error) error {
	return lockedfile.With(s.TasksDir(), fn)
}

// WithPhasesLock runs fn holding the task's phases lock (after tasks.lock in
// the lock order): no phase of the task can be opened meanwhile.
func (s *Store) WithPhasesLock(taskID string, fn func() error) error {
	if _, err := s.Task(taskID); err != nil {
		return err
	}
	return lockedfile.With(s.PhasesDir(taskID), fn)
}

// CreateTask records a new task; the caller holds tasks.lock. build gets a
// fresh id and returns the record (and the context.md text of a subtask, or
// nil). The steps are ordered so that a process killed between any two
// leaves nothing a later command misreads (docs/design.md, "Crash safety"):
// the task's directory (which reserves the id), its owner (build),
// context.md, then the reverse edges (the parent's children, each blocker's
// dependants), and task.json last: the record exists only once everything
// it needs does. A reverse edge whose task.json never came is a stillborn
// task that readers holding tasks.lock skip (ChildrenHeld).
func (s *Store) CreateTask(build func(id string) (*Task, []byte, error)) (*Task, error) {
	id, err := s.freshTaskID()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.PhasesDir(id), 0o755); err != nil {
		return nil, err
	}
	t, context, err := build(id)
	if err != nil {
		_ = os.RemoveAll(s.TaskDir(id))
		return nil, err
	}
	if len(context) > 0 {
		if err := os.WriteFile(s.ContextPath(id), context, 0o644); err != nil {
			return nil, err
		}
	}
	if err := s.link(t); err != nil {
		return nil, err
	}
	crashpoint.Hit("task.linked")
	return t, s.WriteTask(t)
}

func (s *Store) freshTaskID() (string, error) {
	for range 16 {
		if c := s.IDs.New(ids.Task); !s.TaskDirExists(c) {
			return c, nil
		}
	}
	return "", errs.Failf("", "could not find a free task id")
}

// link records t's reverse edges under tasks.lock, like pm done's checks and
// mark, so a child or dependant is either linked before its parent or
// blocker finishes or sees it finished. It runs before t's own record is
// written, so a recorded task always has its edges.
func (s *Store) link(t *Task) error {
	if t.ParentID != "" {
		if _, err := s.UpdateTask(t.ParentID, func(p *Task) error {
			p.Children = appendOnce(p.Children, t.ID)
			return nil
		}); err != nil {
			return err
		}
	}
	for _, b := range t.BlockedBy {
		if _, err := s.UpdateTask(b, func(bt *Task) error {
			bt.Blocks = appendOnce(bt.Blocks, t.ID)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func appendOnce(list []string, id string) []string {
	if slices.Contains(list, id) {
		return list
	}
	return append(list, id)
}

// ChildrenHeld reads the subtasks t lists; the caller holds tasks.lock. A
// listed child without a task.json is a creation killed before its record
// (CreateTask writes the edge first): it never existed and is skipped.
func (s *Store) ChildrenHeld(t *Task) ([]*Task, error) {
	out := make([]*Task, 0, len(t.Children))
	for _, c := range t.Children {
		ct, err := s.Task(c)
		if errs.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ct)
	}
	return out, nil
}

// Children is ChildrenHeld for a caller without tasks.lock: a listed child
// not found may be being created right now, so the lookup is repeated under
// the lock, where it is settled either way.
func (s *Store) Children(taskID string) (*Task, []*Task, error) {
	t, err := s.Task(taskID)
	if err != nil {
		return nil, nil, err
	}
	kids, err := s.ChildrenHeld(t)
	if err != nil || len(kids) == len(t.Children) {
		return t, kids, err
	}
	err = s.WithTasksLock(func() error {
		if t, err = s.Task(taskID); err != nil {
			return err
		}
		kids, err = s.ChildrenHeld(t)
		return err
	})
	return t, kids, err
}

// Unblock removes blocker from the task's blocked_by; it reports whether this
// call made the task active, so exactly one caller starts its owner.
func (s *Store) Unblock(taskID, blocker string) (*Task, bool, error) {
	became := false
	t, err := s.UpdateTask(taskID, func(x *Task) error {
		x.BlockedBy = slices.DeleteFunc(x.BlockedBy, func(b string) bool { return b == blocker })
		if len(x.BlockedBy) == 0 && x.Status == TaskBlocked {
			x.Status, became = TaskActive, true
		}
		return nil
	})
	return t, became, err
}

// WatchTask blocks until check reports true or ctx ends, woken by file
// events on the task's directory and its children's (never a sleep loop).
func (s *Store) WatchTask(ctx context.Context, taskID string, check func() (bool, error)) error {
	dirs := func() []string {
		out := []string{s.TaskDir(taskID)}
		if t, err := s.Task(taskID); err == nil {
			for _, c := range t.Children {
				out = append(out, s.TaskDir(c))
			}
		}
		return out
	}
	return watch.Until(ctx, dirs, check)
}

// ResetStateHeld deletes every task, request, log and the phase index (keeping config.json
// and prompts/); the caller holds tasks.lock and has removed the agents one
// by one under their locks (RemoveAgent), so no host outlives its record.
// The bus is reset separately (Bus().Reset).
func (s *Store) ResetStateHeld() error {
	// The index goes first and comes back empty last: a reset killed
	// midway leaves no complete index naming deleted tasks.
	if err := os.RemoveAll(s.taskIndexDir()); err != nil {
		return err
	}
	for _, sub := range []string{"tasks", "requests", "logs"} {
		dir := filepath.Join(s.Root, sub)
		if err := removeAllRaced(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// The phase index names the tasks just removed: it goes too (a cache,
	// made again as phases are found), after them, or pm doctor --check
	// finds entries naming tasks that are gone. A lookup racing the reset
	// that writes an entry after this finds its task gone and removes it
	// (indexPhase).
	if err := removeAllRaced(s.phaseIndexDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(s.AgentsDir(), 0o755); err != nil {
		return err
	}
	// Temp files of agent record writes killed before their rename
	// (UpdateAgent writes through agents/): nothing else removes them. Only
	// those of agents now gone: an agent made while reset ran may be
	// writing its record this instant, under its own lock, through a temp
	// that must stay (TestResetRaceWithStarters).
	left, _ := filepath.Glob(filepath.Join(s.AgentsDir(), recordTemp+"*"))
	for _, f := range left {
		if name, ok := recordTempAgent(filepath.Base(f)); ok && !s.AgentDirExists(name) {
			_ = os.Remove(f)
		}
	}
	return s.writeTaskIndexComplete()
}

// removeAllRaced is os.RemoveAll retried a few times when a file appeared
// in a directory while it was being emptied: a starter refused a moment
// later (its agent record is gone) may still open its log in logs/
// (TestResetRaceWithStarters).
func removeAllRaced(dir string) error {
	var err error
	for range 5 {
		if err = os.RemoveAll(dir); !errors.Is(err, syscall.ENOTEMPTY) {
			return err
		}
	}
	return err
}
