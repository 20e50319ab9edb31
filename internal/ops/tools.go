package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/render/taskview"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// Tool is a pm operation offered to a model: its name, what it does, the
// JSON Schema of its arguments (derived from the operation's input struct)
// and a call that decodes the arguments, runs the operation as the session's
// actor and renders the result as text for the model.
type Tool struct {
	Name        string
	Description string
	// Schema returns the JSON Schema of the arguments. It is derived on
	// first use, not at start-up: every pm process registers the tools, few
	// need their schemas, and deriving them all doubled a short command's
	// instructions.
	Schema func() json.RawMessage
	Call   func(ctx context.Context, sess *Session, args json.RawMessage) (string, error)
}

// partial is a result that carries something worth showing even with an
// error (a phase that opened though a role agent failed to start).
type partial interface{ Partial() bool }

// tool builds a Tool from a typed operation and the text a model reads of
// its result (err is the operation's error, for results that are partial).
func tool[In, Out any](name, desc string, op func(context.Context, *Session, In) (Out, error),
	text func(sess *Session, in In, out Out, err error) string) Tool {
	return Tool{Name: name, Description: desc, Schema: sync.OnceValue(SchemaFor[In]),
		Call: func(ctx context.Context, sess *Session, args json.RawMessage) (string, error) {
			var in In
			if err := Decode(args, &in); err != nil {
				return "", err
			}
			out, err := op(ctx, sess, in)
			if p, ok := any(out).(partial); err != nil && (!ok || !p.Partial()) {
				return "", err
			}
			return text(sess, in, out, err), err
		}}
}

// maxChat bounds what chat and history return to a model; the newest
// messages are kept.
const maxChat = 48 << 10

var tools = map[string]Tool{}

func register(t Tool) { tools[t.Name] = t }

// LookupTool returns the pm operation offered to models under name.
func LookupTool(name string) (Tool, bool) {
	t, ok := tools[name]
	return t, ok
}

// ToolNames lists the pm operations offered to models, sorted.
func ToolNames() []string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func init() {
	register(tool("say", "Post one message to your phase; the one that reaches its limit closes it.", Say, sayText))
	register(tool("chat", "Read your phase. wait=true blocks until someone else posts, and returns only what is new.", Chat, chatText))
	register(tool("status", "Show a task, its phases and agents.", Status, statusText))
	register(tool("history", "Read the last messages of your task's phases, oldest first.", History, historyText))
	register(tool("phase", "Open a discussion phase on your task, one agent per role; one phase at a time.",
		OpenPhase, phaseText))
	register(tool("extend_phase", "Add n messages to your phase's limit.", ExtendPhase,
		func(_ *Session, _ ExtendInput, ph *store.Phase, _ error) string {
			return fmt.Sprintf("%s limit now %d", ph.ID, ph.MessageLimit)
		}))
	register(tool("end_phase", "Close your phase now; its agents leave.", EndPhase,
		func(_ *Session, _ EndInput, ph *store.Phase, _ error) string {
			return fmt.Sprintf("%s %q closed early", ph.ID, ph.Name)
		}))
	register(tool("subtask", "Create a child task with its own owner.",
		Subtask, func(_ *Session, _ SubtaskInput, r SubtaskResult, _ error) string {
			t := r.Task
			return fmt.Sprintf("%s %s owner @%s (subtask of %s, depth %d)", t.ID, t.Status, t.Owner, r.Parent.ID, t.Depth)
		}))
	register(tool("wait_children", "Block until every subtask of your task is done.", WaitChildren, waitChildrenText))
	register(tool("done", "Mark your task done and commit its work to git.", Done, doneText))
}

func sayText(_ *Session, _ SayInput, r SayResult, _ error) string {
	out := fmt.Sprintf("posted %s to %s %q", r.Message.ID, r.Phase.ID, r.Phase.Name)
	if r.Closed {
		out += fmt.Sprintf("; the phase reached its limit of %d messages and is now closed", r.Phase.MessageLimit)
	}
	return out
}

func formatMessages(msgs []store.Message) string {
	var b bytes.Buffer
	for _, m := range msgs {
		render.PrintMessage(&b, m)
	}
	return b.String()
}

func chatText(_ *Session, in ChatInput, r ChatResult, _ error) string {
	if in.Wait {
		return render.Cap(formatMessages(r.Messages), maxChat, true)
	}
	out := formatMessages(r.Messages)
	if len(r.Messages) == 0 {
		out = "(no messages yet)\n"
	}
	return render.Cap(out, maxChat, true) + "-- " + render.PhaseLine(r.Phase, r.Count)
}

func statusText(sess *Session, _ StatusInput, r StatusResult, _ error) string {
	var b bytes.Buffer
	if r.View != nil {
		taskview.PrintTaskView(&b, r.View.View, r.View.Health, r.View.Requests, sess.Actor)
	} else {
		taskview.PrintSummary(&b, r.Summary.Summary, r.Summary.Health)
	}
	return b.String()
}

func historyText(_ *Session, _ HistoryInput, r HistoryResult, _ error) string {
	if len(r.Entries) == 0 {
		return "no messages yet in " + r.Task.ID
	}
	var b bytes.Buffer
	render.PrintHistory(&b, r.Entries)
	return render.Cap(b.String(), maxChat, true)
}

func phaseText(_ *Session, _ PhaseInput, r PhaseResult, _ error) string {
	var b strings.Builder
	ph := r.Phase
	fmt.Fprintf(&b, "%s %q open: limit %d", ph.ID, ph.Name, ph.MessageLimit)
	for i, n := range r.Agents {
		fmt.Fprintf(&b, ", @%s (%s)", n, ph.Roles[i])
	}
	return b.String()
}

func waitChildrenText(_ *Session, _ WaitChildrenInput, r WaitChildrenResult, err error) string {
	var b strings.Builder
	for _, c := range r.Children {
		fmt.Fprintf(&b, "%s %s %s\n", c.ID, c.Status, c.Description)
	}
	if err == nil {
		fmt.Fprintf(&b, "all %d subtasks of %s finished", len(r.Children), r.Task.ID)
	}
	return b.String()
}

func doneText(_ *Session, _ DoneInput, r *task.DoneResult, _ error) string {
	var b bytes.Buffer
	taskview.PrintDone(&b, r.Task, r)
	return b.String()
}
