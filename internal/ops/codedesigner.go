package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/tooldoc"
)

// codeDesigner decides an agent's code-designer mode when it is addressed
// by a caller (pm task, pm send, pm talk, and the same operations from MCP,
// the dashboard or the TUI): the session's --code-designer flag, the
// caller's PM_CODE_DESIGNER, the prompt object's frontmatter, then config
// (designmode's precedence).
func codeDesigner(sess *Session, obj *prompt.Object) (designmode.Mode, error) {
	var fm *bool
	if obj != nil {
		fm = obj.CodeDesigner
	}
	return designmode.Resolve(designmode.Inputs{CLI: sess.CodeDesigner, Env: sess.getenv(designmode.EnvVar), Frontmatter: fm,
		Config: sess.Store.Config().CodeDesigner.Enabled}, sess.Store.Now())
}

// residentMode records the mode of a prompt object's resident agent for the
// call about to be sent: a resident serves every caller, and its host reads
// the mode from the record before each request.
func residentMode(sess *Session, obj *prompt.Object) error {
	m, err := codeDesigner(sess, obj)
	if err != nil {
		return err
	}
	runtime := obj.Runtime
	if runtime == "" {
		runtime = config.RuntimeLLM
	}
	if _, err := inbox.Resident(sess.Store, sess.State, obj, runtime); err != nil {
		return err
	}
	if a, err := sess.State.Agent(obj.Name); err == nil && designmode.Keep(a.CodeDesigner, m).Equal(a.CodeDesigner) {
		return nil // unchanged: no write, no wake-up of the agent's watchers
	}
	_, err = sess.State.UpdateAgent(obj.Name, func(a *store.Agent) error {
		next := designmode.Keep(a.CodeDesigner, m)
		a.CodeDesigner = &next
		return nil
	})
	return err
}

// ToolDocsInput is pm tools.
type ToolDocsInput struct {
	Name string `json:"name,omitempty" jsonschema:"a tool to show in full; default: list them all"`
}

// ToolDocsResult is the documented tools (one, with its text, when a name was
// given).
type ToolDocsResult struct {
	Tools []ToolEntry `json:"tools"`
}

// ToolEntry is one tool's documentation.
type ToolEntry struct {
	Name       string          `json:"name"`
	Kind       string          `json:"kind"` // pm, primitive, universal or object
	Summary    string          `json:"summary"`
	Source     string          `json:"source"`
	Parameters []tooldoc.Param `json:"parameters"`
	Text       string          `json:"text,omitempty"`
}

// ToolDocs lists the documentation of every tool a model can be given (the
// built-in capabilities and the prompt objects), or shows one in full.
func ToolDocs(ctx context.Context, sess *Session, in ToolDocsInput) (ToolDocsResult, error) {
	reg, err := tooldoc.Load(sess.Store, sess.State)
	if err != nil {
		return ToolDocsResult{}, err
	}
	names := reg.Names()
	if in.Name != "" {
		if _, ok := reg.Lookup(in.Name); !ok {
			return ToolDocsResult{}, errs.NotFoundf("pm tools lists every documented tool", "no tool %q", in.Name)
		}
		names = []string{in.Name}
	}
	res := ToolDocsResult{Tools: []ToolEntry{}}
	for _, n := range names {
		d, _ := reg.Lookup(n)
		params, _ := d.Params() // parsed once already: a bad table fails the load
		if params == nil {
			params = []tooldoc.Param{}
		}
		kind := string(prompt.CapObject)
		if k, ok := prompt.Builtin(n); ok {
			kind = string(k)
		}
		e := ToolEntry{Name: n, Kind: kind, Summary: d.Summary, Source: d.Source, Parameters: params}
		if in.Name != "" {
			e.Text = d.Text
		}
		res.Tools = append(res.Tools, e)
	}
	return res, nil
}
