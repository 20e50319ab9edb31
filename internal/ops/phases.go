package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/agent"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// PhaseInput is pm phase.
type PhaseInput struct {
	Task  string   `json:"task,omitempty" jsonschema:"tk-...; default: yours"`
	Name  string   `json:"name" jsonschema:"what it is for, e.g. \"Design\""`
	Limit int      `json:"limit" jsonschema:"messages until it closes"`
	Roles []string `json:"roles" jsonschema:"at most 3: designer, developer, pm, copywriter, qa or another prompt object"`
	Rules string   `json:"rules,omitempty" jsonschema:"e.g. \"no code, just ideas\""`
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
	t, err := OwnTask(sess.Store, sess.State, sess.Actor, in.Task)
	if err != nil {
		return PhaseResult{}, err
	}
	l, err := sess.launcher()
	if err != nil {
		return PhaseResult{}, err
	}
	mark, allowed, err := checkProgress(ctx, sess, t)
	if err != nil {
		return PhaseResult{}, err
	}
	ph, names, err := agent.OpenPhase(sess.Store, l, sess.Actor, phase.Spec{TaskID: t.ID, Name: in.Name, Limit: in.Limit, Roles: in.Roles, Rules: in.Rules})
	recordProgress(sess.Store, sess.State, t, ph, mark, allowed)
	return PhaseResult{Phase: ph, Agents: names}, err
}

// ExtendInput is pm extend-phase.
type ExtendInput struct {
	Task string `json:"task,omitempty" jsonschema:"tk-...; default: yours"`
	N    int    `json:"n" jsonschema:"how many messages to add"`
}

// ExtendPhase adds N messages to the active phase's limit (owners only).
func ExtendPhase(ctx context.Context, sess *Session, in ExtendInput) (*store.Phase, error) {
	t, ph, err := ownActivePhase(sess, in.Task, "open one with pm phase")
	if err != nil {
		return nil, err
	}
	return phase.Extend(sess.Store, sess.State, sess.Actor, t.ID, ph.ID, in.N)
}

// EndInput is pm end-phase.
type EndInput struct {
	Task string `json:"task,omitempty" jsonschema:"tk-...; default: yours"`
}

// EndPhase closes the active phase early; its role agents leave (owners only).
func EndPhase(ctx context.Context, sess *Session, in EndInput) (*store.Phase, error) {
	t, ph, err := ownActivePhase(sess, in.Task, "nothing to end; see pm status")
	if err != nil {
		return nil, err
	}
	return phase.Close(sess.Store, sess.State, sess.Actor, t.ID, ph.ID, store.CloseEnded)
}

// ownActivePhase is the owner's task and its active phase (try: what to do
// when there is none).
func ownActivePhase(sess *Session, taskID, try string) (*store.Task, *store.Phase, error) {
	t, err := OwnTask(sess.Store, sess.State, sess.Actor, taskID)
	if err != nil {
		return nil, nil, err
	}
	ph, err := phase.Active(sess.Store, sess.State, t.ID, try)
	return t, ph, err
}
