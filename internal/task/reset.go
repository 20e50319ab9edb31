package task

import (
	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// ResetResult says what pm reset removed.
type ResetResult struct {
	Killed []string
	Tasks  int
}

// resetRounds bounds how often reset lists the agents again because new
// ones appeared while it ended the previous list.
const resetRounds = 20

// Reset kills every running agent, then deletes all state but config.json and
// prompts/. Without force it refuses while tasks are live. On a hub it wipes
// the project's records and its bus (st.ResetHeld, the hub's bus Reset),
// which every machine joined to it then reads as new; each machine's own
// files (its logs/) stay with it.
func Reset(s *store.Store, st state.State, actor store.Actor, force bool) (*ResetResult, error) {
	return ResetWith(s, &agent.Launcher{Store: s, State: st}, actor, force)
}

// ResetWith is Reset ending hosts through l's driver. It holds tasks.lock
// throughout, so no task is created or started meanwhile, and ends each
// agent under its own lock before deleting its record: a host being started
// is waited for and ended, a start after that finds no record and spawns
// nothing, and agents created during a round are found by the next one.
func ResetWith(s *store.Store, l *agent.Launcher, actor store.Actor, force bool) (*ResetResult, error) {
	st := l.State
	tasks, err := st.Tasks()
	if err != nil {
		return nil, err
	}
	live := 0
	for _, t := range tasks {
		if t.Live() {
			live++
		}
	}
	if live > 0 && !force {
		return nil, errs.Statef("pm reset --force kills their agents and deletes everything", "%d tasks are still active or blocked", live)
	}
	res := &ResetResult{Tasks: len(tasks)}
	err = st.WithTasks(func() error {
		if err := endAgents(s, st, l, actor, res); err != nil {
			return err
		}
		// No agent runs: the worktrees go before the records that name
		// them (branches with commits of their own stay).
		resetWorktrees(s, st)
		return st.ResetHeld()
	})
	if err != nil {
		return res, err
	}
	if err := s.Bus().Reset(); err != nil {
		return res, err
	}
	s.Notify(bus.Event{Kind: bus.EvReset, Actor: actor.Name, Data: bus.Reset{Tasks: res.Tasks, Killed: res.Killed}})
	return res, nil
}

// endAgents ends and removes every agent, listing them again until none is
// left; the caller holds tasks.lock.
func endAgents(s *store.Store, st state.State, l *agent.Launcher, actor store.Actor, res *ResetResult) error {
	for range resetRounds {
		agents, err := st.Agents()
		if err != nil || len(agents) == 0 {
			return err
		}
		names := make([]string, len(agents))
		for i, a := range agents {
			names[i] = a.Name
		}
		crashpoint.Hit("task.reset.listed")
		for _, name := range names {
			if err := endAndRemove(st, l, actor, name, res); err != nil {
				return err
			}
		}
	}
	return errs.Failf("stop what keeps starting agents, then run pm reset again", "agents kept appearing through %d rounds of reset", resetRounds)
}

// endAndRemove kills a running agent (marked killed first, so nothing
// starts it again and its host does not report a crash), then deletes the
// record under its lock, stopping any host that runs by then (one a start
// racing this reset spawned: Start holds the same lock until it records
// the host, and finds no record after).
func endAndRemove(st state.State, l *agent.Launcher, actor store.Actor, name string, res *ResetResult) error {
	if a, err := st.Agent(name); err == nil && a.Status == store.AgentRunning {
		if err := l.Kill(actor, name); err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
		res.Killed = append(res.Killed, name)
	}
	return st.RemoveAgent(name, func(a *store.Agent) error {
		if a == nil {
			return nil
		}
		return l.StopHost(a)
	})
}

// resetWorktrees removes every task's worktree, as killed, and whatever
// else is left in the worktrees' directory.
func resetWorktrees(s *store.Store, st state.State) {
	tasks, err := st.Tasks()
	if err != nil {
		s.Warnf("reset: %v", err)
		return
	}
	m := tidying(s) // a remote that does not answer costs one git.remote_timeout
	for _, t := range tasks {
		k := *t
		if k.Status != store.TaskDone || k.Held() {
			// Killed: its branch is kept here if it has commits; a remote
			// copy goes (its work brought here), as no record will name it.
			k.Status = store.TaskKilled
		}
		dropWorktree(m, &k)
	}
	m.pushDrops() // the remote copies, in one push
	if _, err := pruneWorktrees(m, st, true); err != nil {
		s.Warnf("reset: %v", err)
	}
}
