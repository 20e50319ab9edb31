package phase

import (
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Resolve picks the phase a chat operation acts on: the named one, else
// the agent's own phase (role agents) or its task's active phase (owners),
// else (for the human) the only active phase.
func Resolve(s *store.Store, st state.State, actor store.Actor, id string) (*store.Phase, error) {
	if id != "" {
		return st.FindPhase(id)
	}
	if a := actor.Agent; a != nil {
		if a.PhaseID != "" {
			return st.Phase(a.TaskID, a.PhaseID)
		}
		if a.TaskID != "" {
			return ownersRoom(s, st, a.TaskID)
		}
	}
	return onlyActivePhase(s, st)
}

// ownersRoom is an owner's room: its task's active phase, or else the one it
// had last (reading it still works, posting says it is closed).
func ownersRoom(s *store.Store, st state.State, taskID string) (*store.Phase, error) {
	phases, err := st.Phases(taskID)
	if err != nil {
		return nil, err
	}
	for _, p := range phases {
		if p.Status == store.PhaseActive {
			return p, nil
		}
	}
	if len(phases) == 0 {
		return nil, errs.Statef(`open one with pm phase "Name" --limit N --roles r1,r2`, "task %s has no active phase (none opened yet)", taskID)
	}
	return phases[len(phases)-1], nil
}

func onlyActivePhase(s *store.Store, st state.State) (*store.Phase, error) {
	tasks, err := st.LiveTasks()
	if err != nil {
		return nil, err
	}
	var found []*store.Phase
	for _, t := range tasks {
		if t.Status != store.TaskActive {
			continue
		}
		ph, err := activePhase(s, st, t.ID)
		if err != nil {
			return nil, err
		}
		if ph != nil {
			found = append(found, ph)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, errs.Statef("name a past phase with --phase ph-...; see pm status", "no active phase")
	}
	names := make([]string, len(found))
	for i, p := range found {
		names[i] = p.ID
	}
	return nil, errs.Usagef("name one with --phase: "+strings.Join(names, ", "), "%d phases are active", len(found))
}

// CheckPost checks that actor may post into ph: the human anywhere, a role
// agent only into its own phase, an owner only into its own task's phases.
// Anyone else (a prompt object's resident agent, an agent of another task)
// is refused, so no agent can fill or close another room.
func CheckPost(actor store.Actor, ph *store.Phase) error {
	a := actor.Agent
	switch {
	case a == nil:
		return nil
	case a.PhaseID != "" && a.PhaseID == ph.ID:
		return nil
	case a.PhaseID == "" && a.IsOwner() && a.TaskID != "" && a.TaskID == ph.TaskID:
		return nil
	}
	return errs.Statef("post in your own room: pm say \"...\" without --phase",
		"@%s may not post in %s (task %s): it is not your phase", actor.Name, ph.ID, ph.TaskID)
}
