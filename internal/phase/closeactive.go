package phase

import (
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// CloseActive closes taskID's active phase, if it has one, for reason: its
// role agents see it closed and leave. A phase that closed meanwhile is not
// an error.
func CloseActive(s *store.Store, st state.State, actor store.Actor, taskID string, reason store.CloseReason) error {
	ph, err := activePhase(s, st, taskID)
	if err != nil || ph == nil {
		return err
	}
	if _, err := Close(s, st, actor, taskID, ph.ID, reason); err != nil && !errs.Is(err, errs.State) {
		return err
	}
	return nil
}
