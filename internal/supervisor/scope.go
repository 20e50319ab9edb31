package supervisor

import (
	"maps"
	"slices"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// What a reconcile reads. With 100k finished agents, reading every record on
// each wake-up cost seconds of CPU; a reconcile reads instead the agents that
// were live at the last look (running, wanted, or being acted on) and those
// the bus named since. An agent that is neither can only become live through
// an agent event (created, started, respawned...), so nothing is missed.
// Every record is read at the first reconcile and after a pm reset.

// note records what an event says changed.
func (sv *Supervisor) note(ev bus.Event) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	switch {
	case ev.Kind == bus.EvReset:
		sv.rescan = true
	case ev.Agent != "":
		sv.dirty[ev.Agent] = true
	}
}

// toRead returns the agents a reconcile looks at (all == true: every one),
// and forgets the events noted so far.
func (sv *Supervisor) toRead() (names map[string]bool, all bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.rescan {
		sv.rescan = false
		sv.dirty = map[string]bool{}
		return nil, true
	}
	names = maps.Clone(sv.known)
	maps.Copy(names, sv.dirty)
	sv.dirty = map[string]bool{}
	return names, false
}

// read returns the records of names (every agent when all), and the names
// whose record is there but cannot be read (torn, corrupt): those stay
// known, to be read again next time. An agent whose record is gone is
// dropped. On failure the next reconcile reads everything.
func (sv *Supervisor) read(names map[string]bool, all bool) ([]*store.Agent, []string, error) {
	if all {
		agents, bad, err := sv.records().AgentsChecked()
		if err != nil {
			sv.mu.Lock()
			sv.rescan = true
			sv.mu.Unlock()
		}
		return sv.mine(agents), bad, err
	}
	agents := make([]*store.Agent, 0, len(names))
	var bad []string
	for name := range names {
		a, err := sv.records().Agent(name)
		switch {
		case err == nil && !sv.here(a):
			sv.movedAway(name) // placed on another worker since
		case err == nil:
			agents = append(agents, a)
		case errs.CodeOf(err) == errs.NotFound:
			sv.movedAway(name) // its record removed (pm reset)
		default:
			bad = append(bad, name)
		}
	}
	slices.Sort(bad)
	return agents, bad, nil
}

// keep remembers whether a must be looked at again next time.
func (sv *Supervisor) keep(name string, live bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if live {
		sv.known[name] = true
	} else {
		delete(sv.known, name)
	}
}

// here reports whether a is this supervisor's: placed on its worker (a
// worker's supervisor), or on none (any other).
func (sv *Supervisor) here(a *store.Agent) bool { return a.Worker == sv.Worker }

// mine keeps the agents that are this supervisor's (here).
func (sv *Supervisor) mine(agents []*store.Agent) []*store.Agent {
	out := agents[:0:0]
	for _, a := range agents {
		if sv.here(a) {
			out = append(out, a)
		}
	}
	return out
}

// movedAway forgets an agent that is no longer this supervisor's (its
// record removed, or placed elsewhere). A worker stops the host it still
// runs for it (nothing else on this machine would), through stopHost like
// every other stop.
func (sv *Supervisor) movedAway(name string) {
	sv.mu.Lock()
	delete(sv.known, name)
	delete(sv.waiting, name)
	h, running := sv.watching[name]
	sv.mu.Unlock()
	if running && sv.Worker != "" && sv.drv.Alive(h) {
		sv.Log.Info("stopping a host whose agent is gone or placed elsewhere", "agent", name, "pid", h.Pid)
		sv.stopHost(name, h, "its agent is gone or placed on another worker")
	}
}
