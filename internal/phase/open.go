package phase

import (
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/store"
)

// Open is pm phase: it checks that every role names a prompt object, records
// the phase (Create) and starts one role agent per role with l. The owner
// check is the caller's. Agent names come back parallel to sp.Roles.
func Open(s *store.Store, l *agent.Launcher, actor store.Actor, sp Spec) (*store.Phase, []string, error) {
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
	ph, err := Create(s, actor, sp)
	if err != nil {
		return nil, nil, err
	}
	names, err := startRoles(s, l, t, ph)
	return ph, names, err
}

func startRoles(s *store.Store, l *agent.Launcher, t *store.Task, ph *store.Phase) ([]string, error) {
	var names []string
	for _, r := range ph.Roles {
		a, err := agent.New(s, store.Agent{Prompt: r, Role: r, TaskID: t.ID, PhaseID: ph.ID, Runtime: t.Runtime, Model: t.Model})
		if err != nil {
			return names, err
		}
		names = append(names, a.Name)
	}
	if err := SetAgents(s, t.ID, ph.ID, names); err != nil {
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

// Active returns the task's active phase, or an exit-5 error saying what to
// do (try) when it has none.
func Active(s *store.Store, taskID, try string) (*store.Phase, error) {
	ph, err := s.ActivePhase(taskID)
	if err != nil {
		return nil, err
	}
	if ph == nil {
		return nil, errs.Statef(try, "task %s has no active phase", taskID)
	}
	return ph, nil
}
