package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// ResumeEnv names, in a host's environment, the answered request it was
// resumed for (Launcher.Resume): the host reads the human's answer from the
// request and gives it to the agent as its first words. Only pm's side sets
// a host's environment, and the agent's own commands never see it.
const ResumeEnv = "PM_RESUME_REQUEST"

// Resume starts again an owner that was given up on (failed, or exited
// without finishing), because the human answered request requestID about
// it. Under the agent's lock it checks that the agent is still stopped and
// still its task's owner (check, run on the record, may refuse), forgets
// its crash count (the human asked for more tries) and spawns its host with
// ResumeEnv set. Nothing is spawned when a live host is recorded.
func (l *Launcher) Resume(name, requestID string, check func(*store.Agent) error) (*store.Agent, error) {
	d := l.driver()
	a, err := l.start(name, func(r *store.Agent) error {
		if r.Status == store.AgentRunning && d.Alive(r.Handle) {
			return errs.Statef("", "@%s is running", r.Name)
		}
		if r.Runtime == config.RuntimeNone {
			return errs.Statef("", "@%s is on the none runtime: a person or script acts for it", r.Name)
		}
		if r.Status != store.AgentFailed && r.Status != store.AgentExited {
			return errs.Statef("", "@%s is %s", r.Name, r.Status)
		}
		if err := check(r); err != nil {
			return err
		}
		r.Crashes = nil
		return nil
	}, ResumeEnv+"="+requestID)
	if errors.Is(err, errNothingStarted) {
		return a, fmt.Errorf("@%s was not started", name)
	}
	return a, err
}

// resumeNote is what a host started by Resume tells its agent first: the
// human's answer to the request about it, and that its task goes on. It is
// "" for any other start (a first start, a respawn), and for a request that
// is not an answered one about this owner.
func resumeNote(s *store.Store, st state.State, a *store.Agent, env []string) string {
	id := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, ResumeEnv+"="); ok {
			id = v
		}
	}
	if id == "" || !a.IsOwner() || a.TaskID == "" {
		return ""
	}
	r, err := st.Request(id)
	if err != nil || r.Agent != a.Name || r.Status != store.RequestAnswered {
		return ""
	}
	return fmt.Sprintf("You were stopped, and the human answered the request about it (%s): %s\n\n%s",
		r.ID, r.Answer, nudgeText(a.TaskID))
}

type resumeKey struct{}

// WithResumeNote gives the llm runtime (LLMFunc) the note a resumed owner
// starts with; ResumeNoteOf reads it ("" for an ordinary start).
func WithResumeNote(ctx context.Context, note string) context.Context {
	if note == "" {
		return ctx
	}
	return context.WithValue(ctx, resumeKey{}, note)
}

// ResumeNoteOf is the note WithResumeNote put in ctx.
func ResumeNoteOf(ctx context.Context) string {
	s, _ := ctx.Value(resumeKey{}).(string)
	return s
}
