package task

import (
	"sync"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// KillResult says what pm kill did.
type KillResult struct {
	Tasks     []string    `json:"tasks"`  // tasks marked killed
	Agents    []string    `json:"agents"` // agents whose processes were ended or marked
	Restarted *store.Task `json:"restarted,omitempty"`
	NewOwner  string      `json:"new_owner,omitempty"`
}

// Kill ends every agent process of the task and its descendants, closes their
// active phases and marks the unfinished tasks killed. With restart the task
// is made live again with a fresh owner and the same description.
//
// The tasks are marked first, under the tasks lock: from then on none of their
// agents is wanted (the supervisor respawns nothing) and no subtask can be
// created under them. Then agents are ended until none of the tree runs.
//
// With restart, a live task is given its fresh owner in that same critical
// section, after the active-task limit is checked there (counting the tasks
// the kill frees): other commands cannot take the slot in between, so either
// the task restarts or the command fails with nothing changed (issue 21).
func Kill(s *store.Store, l *agent.Launcher, actor store.Actor, taskID string, restart bool) (*KillResult, error) {
	st := l.State
	if _, err := st.Task(taskID); err != nil {
		return nil, err
	}
	res := &KillResult{Tasks: []string{}, Agents: []string{}}
	var tree []*store.Task
	var revived *store.Task
	var fresh *store.Agent
	err := st.WithTasks(func() error {
		root, err := st.Task(taskID)
		if err != nil {
			return err
		}
		if tree, err = descendants(st, root); err != nil {
			return err
		}
		revive := restart && root.Live()
		if revive {
			freed := 0
			for _, t := range tree {
				if t.Live() {
					freed++
				}
			}
			if err := checkActiveLimitFreeing(s, st, freed); err != nil {
				return err
			}
		}
		now := s.Now().UTC()
		for _, t := range tree {
			if t.Status == store.TaskDone || t.Status == store.TaskKilled {
				continue
			}
			if !(revive && t.ID == root.ID) {
				if _, err := st.UpdateTask(t.ID, func(x *store.Task) error {
					if x.Status != store.TaskDone {
						x.Status, x.EndedAt = store.TaskKilled, &now
					}
					return nil
				}); err != nil {
					return err
				}
			}
			res.Tasks = append(res.Tasks, t.ID)
			s.Notify(bus.Event{Kind: bus.EvTaskKilled, Actor: actor.Name, TaskID: t.ID, Text: t.Description})
		}
		if revive {
			revived, fresh, err = reviveHeld(s, st, actor, root)
		}
		return err
	})
	if err != nil {
		return res, err
	}
	crashpoint.Hit("task.kill.marked")
	if err := closePhases(s, st, actor, tree); err != nil {
		return res, err
	}
	var keep string // the fresh owner: of the tree, but not to be ended
	if fresh != nil {
		keep = fresh.Name
	}
	if err := killAgents(st, l, actor, tree, keep, res); err != nil {
		return res, err
	}
	// Their agents ended, the killed tasks' worktrees go (a branch with
	// commits of its own stays); a revived task keeps its own. The remote
	// is fetched once for it all, bounded by git.remote_timeout: a kill
	// goes on without a remote that does not answer (tidying).
	m := tidying(s)
	for _, t := range tree {
		if t, err := st.Task(t.ID); err == nil && t.Status == store.TaskKilled {
			dropWorktree(m, t)
		}
	}
	repairRemoteBranches(m, st)
	crashpoint.Hit("task.kill.dropped")
	// A restart moves work: git's own bound, and a fetch the tidying
	// could not make is tried again (its failure is the restart's only
	// if that one fails too).
	m.moving()
	switch {
	case revived != nil:
		if err := startRevived(m, l, actor, revived, fresh); err != nil {
			return res, err
		}
		res.Restarted, res.NewOwner = revived, fresh.Name
	case restart:
		t, owner, err := restartOn(m, l, actor, taskID)
		if err != nil {
			return res, err
		}
		res.Restarted, res.NewOwner = t, owner
	}
	// pm kill ends process groups a pm done may be running in: finish
	// what such a done left (its dependants' unblocking).
	settle(s, l, actor)
	return res, nil
}

// closePhases closes the active phase of each task of tree. It looks for it
// under the task's phases lock, the lock phase creation holds while it checks
// that the task is active: a phase opened before the mark is found here, and
// none can open after it.
func closePhases(s *store.Store, st state.State, actor store.Actor, tree []*store.Task) error {
	for _, t := range tree {
		err := st.WithPhases(t.ID, func() error {
			ph, err := state.ActivePhase(st, t.ID)
			if err != nil || ph == nil {
				return err
			}
			if _, err := phase.Close(s, st, actor, t.ID, ph.ID, store.CloseKilled); err != nil && !errs.Is(err, errs.State) {
				return err
			}
			return nil
		})
		if err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
	}
	return nil
}

// killAgents ends the agents of tree through l's driver, all of a round at
// once (each gets the stop grace in parallel), listing them again after each
// round in case one was (re)started while the previous round ran. An agent
// that no longer runs (failed, exited, its host killed) is stopped too, once:
// what its run left behind (its cgroup, its marked processes) ends with the
// task; it is not listed (its agent had ended already). keep names an agent
// of the tree that is not ended (a restarted task's fresh owner).
func killAgents(st state.State, l *agent.Launcher, actor store.Actor, tree []*store.Task, keep string, res *KillResult) error {
	inTree := map[string]bool{}
	for _, t := range tree {
		inTree[t.ID] = true
	}
	ended := map[string]bool{}
	for range 5 {
		agents, err := st.Agents()
		if err != nil {
			return err
		}
		var round []string
		for _, a := range agents {
			alive := l.HostAlive(a)
			live := a.Status == store.AgentRunning || a.Status == store.AgentPending || alive
			if !inTree[a.TaskID] || a.Name == keep || (ended[a.Name] && !alive) {
				continue
			}
			if !live {
				ended[a.Name] = true
				if _, err := l.EndLeftovers(a); err != nil {
					return err
				}
				continue
			}
			round = append(round, a.Name)
		}
		if len(round) == 0 {
			return nil
		}
		errsOf := make([]error, len(round))
		var wg sync.WaitGroup
		for i, name := range round {
			wg.Go(func() { errsOf[i] = l.Kill(actor, name) })
		}
		wg.Wait()
		for i, name := range round {
			if errsOf[i] != nil {
				return errsOf[i]
			}
			if !ended[name] {
				res.Agents = append(res.Agents, name)
			}
			ended[name] = true
		}
	}
	return nil
}

// Restart gives a killed task a fresh owner with the same description.
func Restart(s *store.Store, l *agent.Launcher, actor store.Actor, taskID string) (*store.Task, string, error) {
	return restartOn(here(s), l, actor, taskID)
}

// restartOn is Restart on m: a pm kill --restart's own view of the machine
// (what it fetched).
func restartOn(m *machine, l *agent.Launcher, actor store.Actor, taskID string) (*store.Task, string, error) {
	s, st := m.s, l.State
	if _, err := st.Task(taskID); err != nil {
		return nil, "", err
	}
	var t *store.Task
	var owner *store.Agent
	// Bringing a task back to life counts against the active-task limit like
	// creating one, checked under the same lock.
	err := st.WithTasks(func() error {
		old, err := st.Task(taskID)
		if err != nil {
			return err
		}
		if old.Status != store.TaskKilled {
			return errs.Statef("only killed tasks restart", "task %s is %s", old.ID, old.Status)
		}
		if err := checkActiveLimit(s, st); err != nil {
			return err
		}
		t, owner, err = reviveHeld(s, st, actor, old)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return t, owner.Name, startRevived(m, l, actor, t, owner)
}

// reviveHeld gives old a fresh owner and makes it live again (blocked while
// a blocker is not done); the caller holds the tasks lock and has checked
// the active-task limit. The task's room, closed since its kill, is closed
// in its record first, so it does not open again with the task.
func reviveHeld(s *store.Store, st state.State, actor store.Actor, old *store.Task) (*store.Task, *store.Agent, error) {
	if err := st.WithPhases(old.ID, func() error {
		return phase.CloseActive(s, st, actor, old.ID, store.CloseKilled)
	}); err != nil {
		return nil, nil, err
	}
	worker := "" // the fresh owner runs where the old one was placed
	if o, err := st.Agent(old.Owner); err == nil {
		worker = o.Worker
	}
	owner, err := agent.New(s, st, store.Agent{Prompt: "owner", TaskID: old.ID, Runtime: old.Runtime, Model: old.Model, Worker: worker})
	if err != nil {
		return nil, nil, err
	}
	t, err := st.UpdateTask(old.ID, func(x *store.Task) error {
		x.Owner, x.EndedAt = owner.Name, nil
		x.Status = store.TaskActive
		if len(x.BlockedBy) > 0 {
			x.Status = store.TaskBlocked
		}
		return nil
	})
	if err != nil || t.Status != store.TaskBlocked {
		return t, owner, err
	}
	// Blockers done meanwhile (or by a pm done killed before it
	// unblocked this task) no longer hold it.
	t, err = unblockDone(s, st, actor, t)
	return t, owner, err
}

// startRevived announces a revived task and starts its owner when it is
// active (a blocked one starts when its blockers are done). Its worktree
// is made from what m fetched: one fetch for the whole kill.
func startRevived(m *machine, l *agent.Launcher, actor store.Actor, t *store.Task, owner *store.Agent) error {
	s := m.s
	s.Notify(bus.Event{Kind: bus.EvTaskRestarted, Actor: actor.Name, TaskID: t.ID, Agent: owner.Name, Text: t.Description})
	if err := ensureWorktree(m, t); err != nil { // removed when it was killed
		return err
	}
	if t.Status == store.TaskActive {
		return l.Start(owner.Name)
	}
	return nil
}

// descendants returns root and every task below it, parents first.
func descendants(st state.State, root *store.Task) ([]*store.Task, error) {
	out := []*store.Task{root}
	for i := 0; i < len(out); i++ {
		for _, c := range out[i].Children {
			ct, err := st.Task(c)
			if err != nil {
				if errs.Is(err, errs.NotFound) {
					continue
				}
				return nil, err
			}
			out = append(out, ct)
		}
	}
	return out, nil
}
