package ops

import (
	"context"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/prompt"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// PhaseInput is pm phase.
type PhaseInput struct {
	Task  string   `json:"task,omitempty" jsonschema:"task id tk-...; default: your own task"`
	Name  string   `json:"name" jsonschema:"what the phase is for, e.g. \"Design\""`
	Limit int      `json:"limit" jsonschema:"messages after which the phase closes"`
	Roles []string `json:"roles" jsonschema:"roles to bring in (prompt objects such as designer, developer, pm, copywriter, qa); at most 3"`
	Rules string   `json:"rules,omitempty" jsonschema:"rules for this phase, e.g. \"no code, just ideas\""`
}

// PhaseResult is the opened phase and its role agents, in the order of its
// roles. With an error it may still hold the phase (a role agent failed to
// start after the phase opened).
type PhaseResult struct {
	Phase  *store.Phase `json:"phase"`
	Agents []string     `json:"agents"`
}

// Partial reports that the phase opened even though the result comes with
// an error.
func (r PhaseResult) Partial() bool { return r.Phase != nil }

// OpenPhase opens a bounded discussion phase on the actor's task and starts
// one role agent per role (owners only).
func OpenPhase(ctx context.Context, sess *Session, in PhaseInput) (PhaseResult, error) {
	t, err := OwnTask(sess.Store, sess.Actor, in.Task)
	if err != nil {
		return PhaseResult{}, err
	}
	l, err := sess.launcher()
	if err != nil {
		return PhaseResult{}, err
	}
	ph, names, err := openPhase(sess.Store, l, sess.Actor, phase.Spec{TaskID: t.ID, Name: in.Name, Limit: in.Limit, Roles: in.Roles, Rules: in.Rules})
	return PhaseResult{Phase: ph, Agents: names}, err
}

// ExtendInput is pm extend-phase.
type ExtendInput struct {
	Task string `json:"task,omitempty" jsonschema:"task id tk-...; default: your own task"`
	N    int    `json:"n" jsonschema:"how many messages to add"`
}

// ExtendPhase adds N messages to the active phase's limit (owners only).
func ExtendPhase(ctx context.Context, sess *Session, in ExtendInput) (*store.Phase, error) {
	t, ph, err := ownActivePhase(sess, in.Task, "open one with pm phase")
	if err != nil {
		return nil, err
	}
	return phase.Extend(sess.Store, sess.Actor, t.ID, ph.ID, in.N)
}

// EndInput is pm end-phase.
type EndInput struct {
	Task string `json:"task,omitempty" jsonschema:"task id tk-...; default: your own task"`
}

// EndPhase closes the active phase early; its role agents leave (owners only).
func EndPhase(ctx context.Context, sess *Session, in EndInput) (*store.Phase, error) {
	t, ph, err := ownActivePhase(sess, in.Task, "nothing to end; see pm status")
	if err != nil {
		return nil, err
	}
	return phase.Close(sess.Store, sess.Actor, t.ID, ph.ID, store.CloseEnded)
}

// ownActivePhase is the owner's task and its active phase (try: what to do
// when there is none).
func ownActivePhase(sess *Session, taskID, try string) (*store.Task, *store.Phase, error) {
	t, err := OwnTask(sess.Store, sess.Actor, taskID)
	if err != nil {
		return nil, nil, err
	}
	ph, err := phase.Active(sess.Store, t.ID, try)
	return t, ph, err
}

// openPhase is pm phase: it checks that every role names a prompt object, records
// the phase (Create) and starts one role agent per role with l. The owner
// check is the caller's. Agent names come back parallel to sp.Roles.
func openPhase(s *store.Store, l *agent.Launcher, actor store.Actor, sp phase.Spec) (*store.Phase, []string, error) {
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

func startRoles(s *store.Store, l *agent.Launcher, t *store.Task, ph *store.Phase) ([]string, error) {
	var names []string
	for _, r := range ph.Roles {
		a, err := agent.New(s, store.Agent{Prompt: r, Role: r, TaskID: t.ID, PhaseID: ph.ID, Runtime: t.Runtime, Model: t.Model})
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
