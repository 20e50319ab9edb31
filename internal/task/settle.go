package task

import (
	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Settle finishes what a command killed between its steps left undone. It
// is idempotent, and run by pm task, subtask, done (also when it refuses a
// task already done), kill and a starting supervisor:
//   - a blocked task whose blockers are all done becomes active (pm done
//     killed after its mark, before it unblocked its dependants);
//   - the owner of an active task that was never started is started (a
//     command killed between its mark and its start);
//   - the open room of an active task whose roles are missing or never
//     started gets them (a pm phase killed part-way: agent.EnsureRoles);
//   - a worktree no task wants is removed, and a live task's missing or
//     half-made worktree made (a pm task, done, kill or reset killed
//     part-way: PruneWorktrees).
//
// (A killed or merged task's branch left on a git remote is deleted by
// the next command that fetches the remote and sees it:
// repairRemoteBranches.)
//
// (A room whose log is full or whose task ended is closed by whoever reads
// it: store.RoomClosedBy.) It returns the tasks it made active.
func Settle(s *store.Store, l *agent.Launcher, actor store.Actor) ([]string, error) {
	st := l.State
	var unblocked, owners, active []string
	var liveTasks []*store.Task
	err := st.WithTasks(func() error {
		live, err := st.LiveTasks()
		if err != nil {
			return err
		}
		liveTasks = live
		for _, t := range live {
			if t.Status == store.TaskBlocked {
				if t, err = unblockDone(s, st, actor, t); err != nil {
					return err
				}
				if t.Status == store.TaskActive {
					unblocked = append(unblocked, t.ID)
				}
			}
			if t.Status == store.TaskActive {
				owners = append(owners, t.Owner)
				active = append(active, t.ID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Worktrees a killed command left behind go, half-made ones are made
	// again (before their owners start, below).
	m := here(s) // the checkout located once, not per task
	repairWorktrees(m, st, liveTasks)
	for i, name := range owners {
		// A worktree a killed pm task left half-made is made before its
		// owner starts there.
		if t, err := st.Task(active[i]); err == nil {
			if err := ensureWorktree(m, t); err != nil {
				s.Warnf("%v", err)
				continue
			}
		}
		startIfNeverStarted(s, st, l, name)
	}
	for _, id := range active {
		ensureRoles(s, st, l, id)
	}
	return unblocked, nil
}

// ensureRoles finishes the open room of task id when its roles are missing
// or never started (and reads only its phases otherwise).
func ensureRoles(s *store.Store, st state.State, l *agent.Launcher, id string) {
	ph, err := state.ActivePhase(st, id)
	if err != nil || ph == nil || !agent.RolesPending(s, st, ph) {
		return
	}
	if _, err := agent.EnsureRoles(s, l, id); err != nil {
		s.Warnf("start the roles of %s: %v", ph.ID, err)
	}
}

// unblockDone drops t's done blockers; the caller holds tasks.lock.
func unblockDone(s *store.Store, st state.State, actor store.Actor, t *store.Task) (*store.Task, error) {
	for _, b := range t.BlockedBy {
		bt, err := st.Task(b)
		if err != nil || bt.Status != store.TaskDone || bt.Held() {
			continue
		}
		if _, err := unblock(s, st, actor, t.ID, b); err != nil {
			return t, err
		}
	}
	return st.Task(t.ID)
}

// startIfNeverStarted starts an owner still pending on an active task (and
// leaves any other alone: its life is the supervisor's business).
func startIfNeverStarted(s *store.Store, st state.State, l *agent.Launcher, name string) {
	a, err := st.Agent(name)
	if err != nil || a.Status != store.AgentPending || a.Runtime == config.RuntimeNone {
		return
	}
	if err := l.Start(name); err != nil && !errs.Is(err, errs.State) {
		s.Warnf("start owner %s: %v", name, err)
	}
}
