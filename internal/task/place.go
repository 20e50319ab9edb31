package task

import (
	"errors"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Place is the worker a new top-level task's agents run on (pm task --on
// NAME): on, which must be a live registered worker, or without it the
// live worker with the most free places (ties: the first by name); ""
// when the project has no worker (they run where pm starts them: the
// files, or a hub project without workers). An unknown or gone worker is
// a usage error that changes nothing.
//
// A worker's free places are its capacity less the agents its
// registration lists (running, taking on, waiting) and the agents placed
// on it since that it does not list yet: a registration is as old as the
// worker's last renewal (up to a third of the TTL), and two tasks placed
// within that time would both see the same free place. The caller holds
// the tasks section (createHeld), in which every placement's record is
// written, so the second placement reads the first's agent.
//
// live is the project's live tasks as the caller read them in that
// section (checkActiveLimit). An agent placed to run belongs to one: a
// live task's owner, or a role agent an active phase of one names. So
// only those records are read (bounded by limits.active_tasks), never
// every agent record the project ever made.
func Place(st state.State, on string, live []*store.Task) (string, error) {
	ws, ok := state.WorkersOf(st)
	if !ok {
		if on != "" {
			return "", errs.Usagef("leave the worker out (pm task without --on): workers run the agents of a project on a hub (pm init --store)",
				"worker %s: this project has no workers (its records are on this machine)", on)
		}
		return "", nil
	}
	workers, err := ws.Workers()
	if err != nil {
		return "", err
	}
	if on != "" {
		for _, w := range workers {
			if w.Name == on {
				return on, nil
			}
		}
		return "", errs.NotFoundf("pm workers lists the live workers", "no live worker named %s", on)
	}
	if len(workers) == 0 {
		return "", nil
	}
	agents, err := liveAgents(st, live)
	if err != nil {
		return "", err
	}
	best, bestFree := "", 0
	for _, w := range workers {
		if free := freePlaces(w, agents); best == "" || free > bestFree {
			best, bestFree = w.Name, free
		}
	}
	return best, nil
}

// freePlaces is w's free places (state.Worker.Free), counting also the
// agents placed on it to run (pending or running) that its registration
// does not list yet.
func freePlaces(w state.Worker, agents []*store.Agent) int {
	var placed []string
	for _, a := range agents {
		if a.Worker == w.Name && a.Runtime != config.RuntimeNone && (a.Status == store.AgentPending || a.Status == store.AgentRunning) {
			placed = append(placed, a.Name)
		}
	}
	return w.Free(placed...)
}

// liveAgents reads the agents of live: each task's owner and the role
// agents its active phases name (a record gone is left out: it runs
// nowhere).
func liveAgents(st state.State, live []*store.Task) ([]*store.Agent, error) {
	var names []string
	for _, t := range live {
		if t.Owner != "" {
			names = append(names, t.Owner)
		}
		phases, err := st.Phases(t.ID)
		if err != nil {
			return nil, err
		}
		for _, ph := range phases {
			if ph.Status == store.PhaseActive {
				names = append(names, ph.Agents...)
			}
		}
	}
	agents := make([]*store.Agent, 0, len(names))
	for _, n := range names {
		a, err := st.Agent(n)
		if errors.Is(err, state.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		agents = append(agents, a)
	}
	return agents, nil
}
