package llmagent

import (
	"os"
	"sync"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/tooldoc"
)

// decideMode records the code-designer mode of an agent no caller decided
// it for (a role agent, a subtask's owner, an object another object
// called): from the host's PM_CODE_DESIGNER, the object's frontmatter and
// config. A mode already in the record (pm task, send, talk) stands.
func (r *Runner) decideMode(a *store.Agent, obj *prompt.Object) {
	if a.CodeDesigner != nil {
		return
	}
	getenv := r.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s := r.Store
	m, err := designmode.Resolve(designmode.Inputs{Env: getenv(designmode.EnvVar), Frontmatter: obj.CodeDesigner,
		Config: s.Config().CodeDesigner.Enabled}, s.Now())
	if err != nil {
		// The caller's pm command refused this value already; a host only
		// inherits it. Run as if unset rather than not at all.
		r.Log.Warn("code-designer mode: ignoring the environment", "err", err)
		m, _ = designmode.Resolve(designmode.Inputs{Frontmatter: obj.CodeDesigner, Config: s.Config().CodeDesigner.Enabled}, s.Now())
	}
	if x, err := r.State.UpdateAgent(a.Name, func(x *store.Agent) error {
		if x.CodeDesigner == nil {
			x.CodeDesigner = &m
		}
		return nil
	}); err == nil {
		a.CodeDesigner = x.CodeDesigner
	}
}

// docPreviews is the loop's DocPreview for this run: the project's tool
// docs, read once on the first preview and kept for the whole run.
func (r *Runner) docPreviews() func(tool string) string {
	docs := sync.OnceValues(func() (*tooldoc.Registry, error) { return tooldoc.Load(r.Store, r.State) })
	return func(tool string) string {
		reg, err := docs()
		if err != nil {
			return "# Tool: " + tool + "\n\n(documentation unavailable: " + err.Error() + ")"
		}
		return reg.Preview(tool, tooldoc.PreviewLines)
	}
}

// applyMode turns the loop's doc preview on or off per the agent's record,
// read again before each run: pm send decides a resident's mode per call.
func (r *Runner) applyMode(name string, loop *llm.Loop, preview func(string) string) {
	loop.DocPreview = nil
	if a, err := r.State.Agent(name); err == nil && a.CodeDesigner.On() {
		loop.DocPreview = preview
	}
}

// docEvent puts a preview or a decision on the bus.
func docEvent(a *store.Agent, ev llm.Event) bus.Event {
	args := clip(ev.Args, 300)
	if ev.Kind == llm.EventDocPreview {
		return agentEvent(a, bus.EvToolDocPreview, ev.Tool+" "+args+"\n"+ev.Text, bus.ToolDocPreview{Tool: ev.Tool, CallID: ev.CallID, Args: args})
	}
	return agentEvent(a, bus.EvToolDocDecision, ev.Tool+" "+ev.Text, bus.ToolDocDecision{Tool: ev.Tool, CallID: ev.CallID, Args: args, Decision: ev.Text})
}
