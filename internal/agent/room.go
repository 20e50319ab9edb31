package agent

import (
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/store"
)

// OpenPhase is pm phase (ops.OpenPhase): it checks that every role names a
// prompt object, records the phase (phase.Create) and starts one role agent
// per role with l. The owner check is the caller's. Agent names come back
// parallel to sp.Roles. It is here, not in package phase, because it starts
// agents: phase stays light enough for the short commands' executable.
func OpenPhase(s *store.Store, l *Launcher, actor store.Actor, sp phase.Spec) (*store.Phase, []string, error) {
	roles := make([]string, 0, len(sp.Roles))
	for _, r := range sp.Roles {
		if r = strings.TrimSpace(r); r != "" {
			roles = append(roles, r)
		}
	}
	sp.Roles = roles
	set, err := prompt.LoadProject(s)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range roles {
		if _, ok := set[r]; !ok {
			return nil, nil, errs.NotFoundf("roles are prompt objects: "+strings.Join(set.Names(), ", "), "no prompt object for role %q", r)
		}
	}
	t, err := s.Task(sp.TaskID)
	if err != nil {
		return nil, nil, err
	}
	ph, err := phase.Create(s, actor, sp)
	if err != nil {
		return nil, nil, err
	}
	names, err := startRoles(s, l, t, ph)
	return ph, names, err
}

func startRoles(s *store.Store, l *Launcher, t *store.Task, ph *store.Phase) ([]string, error) {
	var names []string
	for _, r := range ph.Roles {
		a, err := New(s, store.Agent{Prompt: r, Role: r, TaskID: t.ID, PhaseID: ph.ID, Runtime: t.Runtime, Model: t.Model})
		if err != nil {
			return names, err
		}
		names = append(names, a.Name)
	}
	if err := phase.SetAgents(s, t.ID, ph.ID, names); err != nil {
		return names, err
	}
	ph.Agents = names
	for _, n := range names {
		if err := l.Start(n); err != nil {
			return names, err
		}
	}
	return names, nil
}
