package doctor

import (
	"fmt"

	"github.com/plasmodium/pm/internal/check"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// fix is pm doctor --fix after the check: the repair of a stranded agent
// is the supervisor's (respawn it while wanted, record it ended when not:
// the reconcile decides), so fix only starts it, for the findings this
// machine's supervisor keeps: every one on the files, and on a hub those
// of agents placed on no worker. An agent placed on a worker is a
// worker's to repair (its own, or any live one takes a gone one's over):
// fix names the worker and starts nothing. It returns what it did, one
// line each (nil when nothing was to fix).
func fix(f *cmdutil.Factory, s *store.Store, found []check.Finding) ([]string, error) {
	var workers []string
	here := false
	for _, fd := range found {
		if fd.Kind != check.DeadRunning && fd.Kind != check.NoSupervisor {
			continue
		}
		if fd.Worker != "" {
			workers = append(workers, fmt.Sprintf("%s is placed on worker %s: not this machine's to start; run pm worker in a directory joined to the project (pm workers lists the live ones), and a live worker takes it over", fd.Subject, fd.Worker))
			continue
		}
		here = true
	}
	var out []string
	if here {
		l, err := f.Launcher(s)
		if err != nil {
			return nil, err
		}
		runs, err := ops.EnsureSupervisor(l, f.Getenv)
		if err != nil {
			return nil, err
		}
		if runs {
			out = append(out, "this machine's supervisor runs (started if it was not): it respawns the stranded agents still wanted and records the others ended")
		} else {
			out = append(out, "PM_NO_SUPERVISOR is set: no supervisor started; unset it and run pm doctor --fix again")
		}
	}
	return append(out, workers...), nil
}
