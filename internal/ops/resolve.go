package ops

import (
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// ResolveTask picks the task an operation acts on: the named one, else the
// agent's own task, else (for the human) the only active task.
func ResolveTask(s *store.Store, actor store.Actor, id string) (*store.Task, error) {
	if id != "" {
		return s.Task(id)
	}
	if actor.Agent != nil && actor.Agent.TaskID != "" {
		return s.Task(actor.Agent.TaskID)
	}
	tasks, err := s.LiveTasks()
	if err != nil {
		return nil, err
	}
	var active []string
	var only *store.Task
	for _, t := range tasks {
		if t.Status == store.TaskActive {
			active = append(active, t.ID)
			only = t
		}
	}
	switch len(active) {
	case 1:
		return only, nil
	case 0:
		return nil, errs.Statef(`start one with pm task "..."`, "no active task")
	}
	return nil, errs.Usagef("name one with --task: "+strings.Join(active, ", "), "%d tasks are active", len(active))
}

// OwnTask is the task an owner operation acts on (see ResolveTask), refused
// unless actor owns it.
func OwnTask(s *store.Store, actor store.Actor, id string) (*store.Task, error) {
	t, err := ResolveTask(s, actor, id)
	if err != nil {
		return nil, err
	}
	return t, CheckOwner(actor, t)
}

// CheckOwner checks that actor may run owner operations on t: its owner or
// the human.
func CheckOwner(actor store.Actor, t *store.Task) error {
	if actor.IsHuman() || actor.Name == t.Owner {
		return nil
	}
	return errs.Statef("owner commands belong to @"+t.Owner+"; post your view with pm say", "@%s is not the owner of %s", actor.Name, t.ID)
}

// ResolvePhase picks the phase a chat operation acts on: the named one, else
// the agent's own phase (role agents) or its task's active phase (owners),
// else (for the human) the only active phase.
func ResolvePhase(s *store.Store, actor store.Actor, id string) (*store.Phase, error) {
	if id != "" {
		return s.FindPhase(id)
	}
	if a := actor.Agent; a != nil {
		if a.PhaseID != "" {
			return s.Phase(a.TaskID, a.PhaseID)
		}
		if a.TaskID != "" {
			return ownersRoom(s, a.TaskID)
		}
	}
	return onlyActivePhase(s)
}

// ownersRoom is an owner's room: its task's active phase, or else the one it
// had last (reading it still works, posting says it is closed).
func ownersRoom(s *store.Store, taskID string) (*store.Phase, error) {
	phases, err := s.Phases(taskID)
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

func onlyActivePhase(s *store.Store) (*store.Phase, error) {
	tasks, err := s.LiveTasks()
	if err != nil {
		return nil, err
	}
	var found []*store.Phase
	for _, t := range tasks {
		if t.Status != store.TaskActive {
			continue
		}
		ph, err := s.ActivePhase(t.ID)
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
