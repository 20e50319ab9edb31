package phase

import (
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Active returns the task's active phase, or an exit-5 error saying what to
// do (try) when it has none.
func Active(s *store.Store, st state.State, taskID, try string) (*store.Phase, error) {
	ph, err := activePhase(s, st, taskID)
	if err != nil {
		return nil, err
	}
	if ph == nil {
		return nil, errs.Statef(try, "task %s has no active phase", taskID)
	}
	return ph, nil
}

// activePhase is the task's active phase (its Status derived), nil when it
// has none.
func activePhase(s *store.Store, st state.State, taskID string) (*store.Phase, error) {
	ps, err := st.Phases(taskID)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Status == store.PhaseActive {
			return p, nil
		}
	}
	return nil, nil
}
