package task

import (
	"errors"
	"slices"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// DoneResult says what pm done did.
type DoneResult struct {
	Task      *store.Task `json:"task"`
	Commit    gitx.Result `json:"commit"`
	Unblocked []string    `json:"unblocked"` // dependants that became active
	// Merge is the merge of the task's branch (a task with a worktree).
	Merge *gitx.MergeResult `json:"merge,omitempty"`
	// Held: the merge waits for review (pm merge or pm reject).
	Held bool `json:"held,omitempty"`
}

// Done closes the loop on a task: close its active phase, commit its work
// (in its worktree, then merged into the branch it merges into; or the
// checkout outside .plasmodium/), mark it done, unblock its dependants and
// tell the parent's owner. A task with unfinished subtasks is refused; a
// merge that waits (a conflict, local changes where it lands) leaves the
// task active, one held for review marks it done with its dependants
// still waiting.
func Done(s *store.Store, l *agent.Launcher, actor store.Actor, taskID string) (*DoneResult, error) {
	st := l.State
	if _, err := st.Task(taskID); err != nil {
		return nil, err
	}
	res := &DoneResult{Unblocked: []string{}}
	var t *store.Task
	m := here(s) // one fetch of the remote for the whole command
	// The tasks lock keeps subtasks from being created, and the task's phases
	// lock keeps phases from being opened, between the checks and the mark.
	err := st.WithTasks(func() error {
		return st.WithPhases(taskID, func() error {
			var err error
			t, err = finish(m, st, actor, taskID, res)
			return err
		})
	})
	if err != nil {
		if errs.Is(err, errs.State) {
			// A retry after a pm done killed past its mark finishes that
			// one's unblocking before it says the task is done already.
			settle(s, l, actor)
		}
		return nil, err
	}
	crashpoint.Hit("task.done.marked")
	res.Task = t
	if res.Commit.Hash != "" {
		s.Notify(bus.Event{Kind: bus.EvCommit, Actor: actor.Name, TaskID: t.ID, Text: res.Commit.Hash,
			Data: bus.Commit{Files: res.Commit.Files, Excluded: res.Commit.Excluded}})
	}
	if t.Worktree != nil {
		mergeEvent(s, actor, t, res.Merge)
	}
	s.Notify(bus.Event{Kind: bus.EvTaskDone, Actor: actor.Name, TaskID: t.ID, Text: t.Description,
		Data: bus.TaskDone{Commit: res.Commit.Hash, Held: res.Held, NoRepo: res.Commit.NoRepo, NoChanges: res.Commit.NoChanges}})
	if res.Held {
		ask(s, st, actor, t, t.Merge)
		if _, err := st.UpdateTask(t.ID, func(x *store.Task) error { x.Merge = t.Merge; return nil }); err != nil {
			s.Warnf("record the review request of %s: %v", t.ID, err)
		}
		repairRemoteBranches(m, st)
		settle(s, l, actor)
		return res, nil // dependants wait for pm merge
	}
	if t.Worktree != nil {
		res.Unblocked = finishDone(m, st, l, actor, t, true)
		return res, nil
	}
	res.Unblocked = unblockDependants(s, st, l, actor, t)
	if t.ParentID != "" {
		tellParent(s, st, actor, t)
	}
	settle(s, l, actor)
	return res, nil
}

// unblockDependants unblocks the tasks waiting on t, now done and merged,
// and starts the owners of those that became active.
func unblockDependants(s *store.Store, st state.State, l *agent.Launcher, actor store.Actor, t *store.Task) []string {
	out := []string{}
	for _, dep := range t.Blocks {
		now, err := unblock(s, st, actor, dep, t.ID)
		if errs.Is(err, errs.NotFound) {
			continue // a creation killed before its record: never a dependant
		}
		if err != nil {
			s.Warnf("unblock %s: %v", dep, err)
			continue
		}
		if now {
			out = append(out, dep)
			if dt, err := st.Task(dep); err == nil {
				if err := l.Start(dt.Owner); err != nil {
					s.Warnf("start owner of %s: %v", dep, err)
				}
			}
		}
	}
	return out
}

// settle runs Settle for a command whose own work is done: what it finds
// left over from an earlier killed command is warned about, not failed on.
func settle(s *store.Store, l *agent.Launcher, actor store.Actor) {
	if _, err := Settle(s, l, actor); err != nil {
		s.Warnf("settle: %v", err)
	}
}

// finish checks, closes the phase, commits and marks the task done; the
// caller holds the tasks lock and the task's phases lock.
func finish(m *machine, st state.State, actor store.Actor, taskID string, res *DoneResult) (*store.Task, error) {
	s := m.s
	t, err := st.Task(taskID)
	if err != nil {
		return nil, err
	}
	if t.Status != store.TaskActive {
		return nil, errs.Statef("see 'pm status "+t.ID+"'", "task %s is %s, not active", t.ID, t.Status)
	}
	kids, err := childrenHeld(st, t)
	if err != nil {
		return nil, err
	}
	for _, ct := range kids {
		c := ct.ID
		if ct.Status != store.TaskDone && ct.Status != store.TaskKilled {
			return nil, errs.Statef("run 'pm wait-children' first", "subtask %s is still %s", c, ct.Status)
		}
	}
	if ph, err := state.ActivePhase(st, t.ID); err != nil {
		return nil, err
	} else if ph != nil {
		if _, err := phase.Close(s, st, actor, t.ID, ph.ID, store.CloseTask); err != nil && !errs.Is(err, errs.State) {
			return nil, err
		}
	}
	// Into the repository pinned when the task was created, nowhere else:
	// its worktree's branch, or the checkout. A task whose code goes
	// through a remote: this machine's worktree of it (made now if this
	// machine has none).
	if t.Worktree != nil && t.Worktree.Remote != "" {
		if err := makeWorktree(m, t); err != nil {
			return nil, err
		}
	}
	lt, err := m.local(t)
	if err != nil {
		return nil, err
	}
	res.Commit, err = commitWork(s, lt)
	if err != nil {
		return nil, commitError(err)
	}
	crashpoint.Hit("task.done.committed")
	var held *store.TaskMerge
	if t.Worktree != nil {
		if t.Review && (t.Merge == nil || t.Merge.State == store.MergeReview) {
			res.Held, held = true, &store.TaskMerge{State: store.MergeReview}
		}
		if res.Merge, err = land(m, st, actor, lt, gitx.FavorNone, res.Held); err != nil {
			return nil, err
		}
	}
	now := s.Now().UTC()
	was := t.Merge
	t, err = st.UpdateTask(t.ID, func(x *store.Task) error {
		if x.Status != store.TaskActive {
			return errs.Statef("", "task %s became %s meanwhile", x.ID, x.Status)
		}
		x.Status, x.EndedAt, x.Merge = store.TaskDone, &now, held
		if res.Commit.Hash != "" || x.Commit == "" {
			x.Commit = res.Commit.Hash
		}
		if res.Merge != nil {
			x.Merged = res.Merge.Hash
		}
		return nil
	})
	if err == nil && !res.Held {
		settleRequest(s, st, actor, was, "merged by pm done")
	}
	return t, err
}

// unblock removes blocker from task's blocked_by; it reports whether this
// call made the task active (so exactly one caller starts its owner).
func unblock(s *store.Store, st state.State, actor store.Actor, taskID, blocker string) (bool, error) {
	became := false
	t, err := st.UpdateTask(taskID, func(x *store.Task) error {
		became = false // fn may run again (a retried compare-and-set)
		x.BlockedBy = slices.DeleteFunc(x.BlockedBy, func(b string) bool { return b == blocker })
		if len(x.BlockedBy) == 0 && x.Status == store.TaskBlocked {
			x.Status, became = store.TaskActive, true
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if became {
		s.Notify(bus.Event{Kind: bus.EvTaskUnblocked, Actor: actor.Name, TaskID: t.ID, Text: "blocker " + blocker + " done"})
	}
	return became, nil
}

// tellParent tells the parent's owner, through its inbox, that a subtask
// is done: the same mailbox prompt objects use, so an llm owner or a script
// waiting on its inbox wakes on it.
func tellParent(s *store.Store, st state.State, actor store.Actor, t *store.Task) {
	p, err := st.Task(t.ParentID)
	if err != nil {
		return
	}
	text := "subtask " + t.ID + " is done: " + t.Description
	if _, err := inbox.Send(s, st, inbox.Message{Kind: inbox.KindNotice, From: actor.Name, To: p.Owner, TaskID: t.ID, Text: text}); err != nil {
		s.Warnf("notify %s: %v", p.Owner, err)
	}
	s.Notify(bus.Event{Kind: bus.EvChildDone, Actor: actor.Name, TaskID: p.ID, Agent: p.Owner, Text: text,
		Data: bus.ChildDone{Child: t.ID}})
}

// commitError is a failed commit with what fixes it: a git lock pm cannot
// take names the lock and who holds it (gitx.LockError), anything else the
// repository. The task stays active either way.
func commitError(err error) error {
	if le, ok := errors.AsType[*gitx.LockError](err); ok {
		return errs.Failf(le.Try()+" with 'pm done'; the task is still active", "commit: %v", err)
	}
	if me, ok := errors.AsType[*gitx.MovedError](err); ok {
		return errs.Statef(me.Try()+", then run 'pm done' again; the task is still active", "commit: %v", err)
	}
	return errs.Failf("fix the repository (git status), then run 'pm done' again; the task is still active", "commit: %v", err)
}
