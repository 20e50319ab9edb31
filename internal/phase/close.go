package phase

import (
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// closeHeld marks the phase closed inside its room's transaction and
// announces it: the same change and event as the store's own repair close
// (store.Closing, store.PhaseClosedEvent).
func closeHeld(s *store.Store, actor store.Actor, tx state.RoomTx, reason store.CloseReason) error {
	if err := tx.Update(store.Closing(s.Now(), reason)); err != nil {
		return err
	}
	n, _ := tx.Count()
	s.Notify(store.PhaseClosedEvent(actor, tx.Phase(), n))
	return nil
}

// Close closes an active phase early (pm end-phase, or its task ending).
func Close(s *store.Store, st state.State, actor store.Actor, taskID, phaseID string, reason store.CloseReason) (*store.Phase, error) {
	var out *store.Phase
	err := st.WithPhase(taskID, phaseID, func(tx state.RoomTx) error {
		if tx.Phase().Status != store.PhaseActive {
			return closedErr(tx.Phase())
		}
		if err := closeHeld(s, actor, tx, reason); err != nil {
			return err
		}
		out = tx.Phase()
		return nil
	})
	return out, err
}

// Extend raises the active phase's limit by n, within messages_per_phase.
func Extend(s *store.Store, st state.State, actor store.Actor, taskID, phaseID string, n int) (*store.Phase, error) {
	if n < 1 {
		return nil, errs.Usagef("pm extend-phase 5", "extend by 1 or more messages, got %d", n)
	}
	var out *store.Phase
	err := st.WithPhase(taskID, phaseID, func(tx state.RoomTx) error {
		ph := tx.Phase()
		if ph.Status != store.PhaseActive {
			return closedErr(ph)
		}
		max := s.Config().Limits.MessagesPerPhase
		if !fitsLimit(ph.MessageLimit, n, max) {
			room := 0 // what is left, when phase.json holds a sane limit
			if ph.MessageLimit >= 0 && ph.MessageLimit <= max {
				room = max - ph.MessageLimit
			}
			return errs.Limitf("extend by at most "+itoa(room)+", or open a new phase",
				"extending %s by %d messages is over the limit of %d per phase", ph.ID, n, max)
		}
		if err := tx.Update(func(p *store.Phase) { p.MessageLimit += n }); err != nil {
			return err
		}
		out = tx.Phase()
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Notify(bus.Event{Kind: bus.EvPhaseExtended, Actor: actor.Name, TaskID: taskID, PhaseID: phaseID,
		Data: bus.PhaseExtended{By: n, Limit: out.MessageLimit}})
	return out, nil
}

// fitsLimit reports whether cur+n stays within max, checking the range
// before any arithmetic so a huge n cannot wrap the sum negative. cur comes
// from phase.json and may have been edited by hand.
func fitsLimit(cur, n, max int) bool {
	return n >= 0 && cur >= 0 && cur <= max && n <= max-cur
}

// SetAgents records the role agent names started for a phase.
func SetAgents(s *store.Store, st state.State, taskID, phaseID string, names []string) error {
	_, err := st.UpdatePhase(taskID, phaseID, func(p *store.Phase) { p.Agents = names })
	return err
}
