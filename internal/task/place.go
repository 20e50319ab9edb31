package task

import (
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
)

// Place is the worker a new top-level task's agents run on (pm task --on
// NAME): on, which must be a live registered worker, or without it the
// live worker with the most free capacity (ties: the first by name); ""
// when the project has no worker (they run where pm starts them: the
// files, or a hub project without workers). An unknown or gone worker is
// a usage error that changes nothing.
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
	best := -1
	for i, w := range live {
		if on != "" && w.Name == on {
			return on, nil
		}
		if best < 0 || w.Free() > live[best].Free() {
			best = i
		}
	}
	if on != "" {
		return "", errs.NotFoundf("pm workers lists the live workers", "no live worker named %s", on)
	}
	if best < 0 {
		return "", nil
	}
	return live[best].Name, nil
}
