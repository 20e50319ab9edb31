package ops

import (
	"context"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// StopInput is pm stop.
type StopInput struct {
	Name string `json:"name" jsonschema:"the resident prompt object to stop, e.g. greeter"`
}

// StopResult is the stopped resident and whether it was running.
type StopResult struct {
	Agent   *store.Agent `json:"agent"`
	Stopped bool         `json:"stopped"`
}

// Stop ends a resident prompt object's process (humans only); its next
// call starts it again. Task agents are ended with their task (pm kill).
func Stop(ctx context.Context, sess *Session, in StopInput) (StopResult, error) {
	if !sess.Actor.IsHuman() {
		return StopResult{}, errs.Statef("ask the human", "agents may not stop prompt objects")
	}
	if !ids.ValidAgentName(in.Name) {
		return StopResult{}, errs.Usagef("pm agents lists them", "%q is not an agent name", in.Name)
	}
	a, err := sess.State.Agent(in.Name)
	if errs.Is(err, errs.NotFound) {
		return StopResult{}, errs.NotFoundf("pm agents --all lists the residents that ran", "@%s has never run", in.Name)
	}
	if err != nil {
		return StopResult{}, err
	}
	if a.TaskID != "" {
		return StopResult{}, errs.Statef("pm kill "+a.TaskID+" ends its task's agents", "@%s works on %s; it ends with its task", a.Name, a.TaskID)
	}
	if a.Status != store.AgentRunning {
		return StopResult{Agent: a}, nil
	}
	l, err := sess.launcher()
	if err != nil {
		return StopResult{}, err
	}
	if err := l.Kill(sess.Actor, a.Name); err != nil {
		return StopResult{}, err
	}
	a, err = sess.State.Agent(a.Name)
	return StopResult{Agent: a, Stopped: true}, err
}

// residentHint turns pm kill NAME into a pointer at pm stop when NAME is a
// resident prompt object.
func residentHint(s *store.Store, st state.State, id string, err error) error {
	if strings.HasPrefix(id, "tk-") || !ids.ValidAgentName(id) {
		return err
	}
	if a, aerr := st.Agent(id); aerr == nil && a.TaskID == "" {
		return errs.Usagef("pm stop "+id, "@%s is a resident prompt object, not a task", id)
	}
	return err
}
