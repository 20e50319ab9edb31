package capability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Env is what capabilities act with and on.
type Env struct {
	Store    *store.Store
	State    state.State     // the project's records, opened with the store
	Actor    store.Actor     // who the pm operations act as
	Launcher *agent.Launcher // starts role agents and subtask owners; nil: those tools refuse
	// Workspace is the directory primitives are confined to (default: the
	// project directory, Store.ProjectDir()).
	Workspace string
	// CallPO sends message to prompt object to and returns its reply. The
	// agent host provides it; nil: messaging another object is refused.
	CallPO func(ctx context.Context, to, message string) (string, error)
	// OnThink receives each thought of the think capability.
	OnThink func(string)
	// OnCreated is told about each prompt object create_capability made, so
	// a host can offer it as a tool from the next run on.
	OnCreated func(*prompt.Object)
	// Getenv is the host's environment for runtime checks (nil: os.Getenv).
	Getenv func(string) string
	// Halt ends the agent's run for reason: the loop breaker's "stop" in
	// an operation it holds (ops.Session.Halt). nil: nothing to end.
	Halt func(reason string)
	// Fence is the agent's host's hold on its lease: each tool call takes
	// a fence mark on it first (fence.go), and the operations' room
	// appends carry it (ops.Session.Fence). nil: none (a person's).
	Fence state.AgentLease
}

// session is who the pm operations act as: the agent, with its host's
// launcher.
func (env *Env) session() *ops.Session {
	return &ops.Session{Store: env.Store, State: env.State, Actor: env.Actor, Launcher: env.Launcher, Getenv: env.Getenv, Halt: env.Halt, Fence: env.Fence}
}

// impl is a built-in capability's descriptor and behaviour.
type impl struct {
	name   string
	desc   string
	params func() json.RawMessage // derived on first use (see ops.Tool.Schema)
	call   func(ctx context.Context, env *Env, args json.RawMessage) (string, error)
}

// impls holds every built-in capability; prompt.BuiltinNames names the same set (a test
// keeps them in step).
var impls = map[string]impl{}

func register(b impl) { impls[b.name] = b }

// builtin is a capability whose arguments are In: the JSON Schema is derived
// from In's tags (ops.SchemaFor), and the call decodes into In before run.
func builtin[In any](name, desc string, run func(ctx context.Context, env *Env, a In) (string, error)) impl {
	return impl{name: name, desc: desc, params: sync.OnceValue(ops.SchemaFor[In]),
		call: func(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
			var a In
			if err := ops.Decode(args, &a); err != nil {
				return "", err
			}
			return run(ctx, env, a)
		}}
}

// Tools builds the tools of obj: its declared capabilities in order, then,
// for a prompt object that is not an agent of a task (a resident, or the
// human's view of it), the universal ones it did not declare. An owner or a
// role agent gets exactly what its prompt declares: each tool is paid for
// on every model call, and one its prompt does not name is one it was not
// told to use. A capability naming another prompt object becomes a tool of
// that name taking {message}. An unknown capability is an error naming
// obj's file and the line of the capability.
func Tools(env *Env, obj *prompt.Object) ([]llm.Tool, error) {
	if env == nil || env.Store == nil {
		return nil, errors.New("capability: no store to act on")
	}
	set, err := prompt.LoadProject(env.Store, env.State)
	if err != nil {
		return nil, err
	}
	names := slices.Clone(obj.Capabilities)
	if a := env.Actor.Agent; a == nil || a.TaskID == "" {
		for _, u := range prompt.Universals() {
			if !slices.Contains(names, u) {
				names = append(names, u)
			}
		}
	}
	var tools []llm.Tool
	seen := map[string]bool{}
	for i, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		if b, ok := impls[name]; ok {
			tools = append(tools, builtinTool(env, name, b))
			continue
		}
		if po, ok := set[name]; ok && name != obj.Name {
			tools = append(tools, objectTool(env, po))
			continue
		}
		return nil, &prompt.Error{File: obj.Source, Line: obj.CapabilityLine(i),
			Msg: fmt.Sprintf("unknown capability %q; known: %s, or a prompt object (%s)", name,
				strings.Join(prompt.BuiltinNames(""), ", "), strings.Join(set.Names(), ", "))}
	}
	return tools, nil
}

func builtinTool(env *Env, name string, b impl) llm.Tool {
	return llm.Tool{
		Name: name, Description: b.desc, Parameters: b.params(),
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			if err := env.fence(ctx, name); err != nil {
				return result(ctx, "", err)
			}
			if err := env.confirm(ctx, name, args); err != nil {
				return result(ctx, "", err)
			}
			out, err := b.call(ctx, env, args)
			return result(ctx, out, err)
		},
	}
}

// messageArgs are the arguments of a tool that is another prompt object.
type messageArgs struct {
	Message string `json:"message" jsonschema:"what to ask or tell it, in plain language"`
}

var messageSchema = sync.OnceValue(ops.SchemaFor[messageArgs])

func objectTool(env *Env, po *prompt.Object) llm.Tool {
	desc := po.Description
	if desc == "" {
		desc = "A prompt object."
	}
	return llm.Tool{
		Name:        po.Name,
		Description: "Prompt object " + po.Name + ": " + desc + " Send it a message; its reply comes back as the result.",
		Parameters:  messageSchema(),
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a messageArgs
			if err := ops.Decode(args, &a); err != nil {
				return result(ctx, "", err)
			}
			if strings.TrimSpace(a.Message) == "" {
				return result(ctx, "", errs.Usagef(`{"message": "..."}`, "empty message to %s", po.Name))
			}
			if err := env.fence(ctx, po.Name); err != nil {
				return result(ctx, "", err)
			}
			if err := env.confirm(ctx, po.Name, args); err != nil {
				return result(ctx, "", err)
			}
			if env.CallPO == nil {
				return result(ctx, "", errs.Failf("", "messaging prompt objects is not available in this host"))
			}
			out, err := env.CallPO(ctx, po.Name, a.Message)
			return result(ctx, out, err)
		},
	}
}

// result turns a capability's outcome into a tool result: errors become
// text the model can react to; only an ended context stays an error.
func result(ctx context.Context, out string, err error) (string, error) {
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return "", ctx.Err()
	}
	msg := Describe(err)
	if out != "" {
		msg = out + "\n" + msg
	}
	return msg, nil
}

// Describe renders err for a model: what its exit code means, the message,
// and the Try: hint.
func Describe(err error) string {
	var what string
	switch errs.CodeOf(err) {
	case errs.Usage:
		what = "bad arguments"
	case errs.Limit:
		what = "refused (limit)"
	case errs.NotFound:
		what = "not found"
	case errs.State:
		what = "wrong state"
	case errs.Timeout:
		what = "timed out"
	default:
		what = "error"
	}
	s := what + ": " + err.Error()
	if try := errs.TryOf(err); try != "" {
		s += "\nTry: " + try
	}
	return s
}
