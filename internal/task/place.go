package task

import (
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
func Place(st state.State, on string) (string, error) {
	ws, ok := state.WorkersOf(st)
	if !ok {
		if on != "" {
			return "", errs.Usagef("leave the worker out (pm task without --on): workers run the agents of a project on a hub (pm init --store)",
				"worker %s: this project has no workers (its records are on this machine)", on)
		}
		return "", nil
	}
	live, err := ws.Workers()
	if err != nil {
		return "", err
	}
	if on != "" {
		for _, w := range live {
			if w.Name == on {
				return on, nil
			}
		}
		return "", errs.NotFoundf("pm workers lists the live workers", "no live worker named %s", on)
	}
	if len(live) == 0 {
		return "", nil
	}
	agents, err := st.Agents()
	if err != nil {
		return "", err
	}
	best, bestFree := "", 0
	for _, w := range live {
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
