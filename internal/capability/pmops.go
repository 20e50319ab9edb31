package capability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// maxChat bounds what chat and history return; the newest messages are kept.
const maxChat = 48 << 10

func init() {
	register("say", "Post a message to your discussion phase (pm say). A phase closes exactly at its message limit; "+
		"posting to a closed phase is refused with 'wrong state'.",
		schema(props{
			"message": str("the message, under 16 KiB"),
			"phase":   str("phase id ph-...; default: your own phase, or your task's active one"),
		}, "message"), sayTool)
	register("chat", "Read the messages of your discussion phase (pm chat). With wait=true, block until someone else "+
		"posts and return only what is new to you (pm chat --wait); 'wrong state' when the phase closes first.",
		schema(props{
			"phase": str("phase id ph-...; default: your own phase, or your task's active one"),
			"wait":  boolean("block until there is a new message from someone else"),
		}), chatTool)
	register("status", "Show a task with its phases and agents (pm status); default: your own task.",
		schema(props{"task": str("task id tk-...; default: your own task, or an overview of all live tasks")}), statusTool)
	register("history", "Read the last messages of all the phases of your task, oldest phase first (pm history).",
		schema(props{"tail": integer("how many messages, counted back from the newest (default 20)")}), historyTool)
	register("phase", "Open a bounded discussion phase on your task and start one role agent per role (pm phase; owners only). "+
		"One active phase per task; limits on messages per phase, roles per phase and phases per task are refused with 'refused (limit)'.",
		schema(props{
			"name":  str(`what the phase is for, e.g. "Design"`),
			"limit": integer("messages after which the phase closes"),
			"roles": strList("roles to bring in (prompt objects such as designer, developer, pm, copywriter, qa); at most 3"),
			"rules": str(`rules for this phase, e.g. "no code, just ideas"`),
		}, "name", "limit", "roles"), phaseTool)
	register("extend_phase", "Add n messages to your active phase's limit (pm extend-phase; owners only).",
		schema(props{"n": integer("how many messages to add")}, "n"), extendTool)
	register("end_phase", "Close your active phase early; its role agents leave (pm end-phase; owners only).",
		schema(nil), endTool)
	register("subtask", "Create a child task with its own owner agent (pm subtask; owners only). Refused past the subtask depth and active task limits.",
		schema(props{
			"description": str("what the subtask must achieve"),
			"context":     str("what the child's owner needs to know (becomes its context.md)"),
		}, "description"), subtaskTool)
	register("wait_children", "Block until every subtask of your task is done (pm wait-children; owners only).",
		schema(props{"timeout": str(`give up after this long, e.g. "30m" (default: wait as long as the run allows)`)}), waitChildrenTool)
	register("done", "Mark your task done and commit the work to git (pm done; owners only). Refused while a subtask is unfinished.",
		schema(nil), doneTool)
}

func needLauncher(env *Env) (*agent.Launcher, error) {
	if env.Launcher == nil {
		return nil, errs.Failf("", "this host cannot start agents")
	}
	return env.Launcher, nil
}

// ownTask is the task an owner operation acts on, checked like the CLI does.
func ownTask(env *Env) (*store.Task, error) { return cmdutil.OwnTask(env.Store, env.Actor, "") }

// ownActivePhase is the owner's task and its active phase (try: what to do
// when there is none).
func ownActivePhase(env *Env, try string) (*store.Task, *store.Phase, error) {
	t, err := ownTask(env)
	if err != nil {
		return nil, nil, err
	}
	ph, err := phase.Active(env.Store, t.ID, try)
	return t, ph, err
}

func sayTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	var a struct{ Message, Phase string }
	if err := decode(args, &a); err != nil {
		return "", err
	}
	ph, err := cmdutil.Phase(env.Store, env.Actor, a.Phase)
	if err != nil {
		return "", err
	}
	msg, closed, err := phase.Say(env.Store, env.Actor, ph.TaskID, ph.ID, a.Message)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("posted %s to %s %q", msg.ID, ph.ID, ph.Name)
	if closed {
		out += fmt.Sprintf("; the phase reached its limit of %d messages and is now closed", ph.MessageLimit)
	}
	return out, nil
}

func formatMessages(msgs []store.Message) string {
	var b bytes.Buffer
	for _, m := range msgs {
		cmdutil.PrintMessage(&b, m)
	}
	return b.String()
}

func chatTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	var a struct {
		Phase string
		Wait  bool
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	s := env.Store
	ph, err := cmdutil.Phase(s, env.Actor, a.Phase)
	if err != nil {
		return "", err
	}
	if a.Wait {
		w, err := phase.WaitNew(ctx, s, env.Actor, ph)
		if w == nil {
			return "", err
		}
		return capText(formatMessages(w.Messages()), maxChat, true), err
	}
	msgs, err := s.Messages(ph.TaskID, ph.ID)
	if err != nil {
		return "", err
	}
	phase.MarkSeen(s, env.Actor, ph, len(msgs))
	out := formatMessages(msgs)
	if len(msgs) == 0 {
		out = "(no messages yet)\n"
	}
	return capText(out, maxChat, true) + "-- " + cmdutil.PhaseLine(ph, len(msgs)), nil
}

func statusTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	var a struct{ Task string }
	if err := decode(args, &a); err != nil {
		return "", err
	}
	var b bytes.Buffer
	id := a.Task
	if id == "" && env.Actor.Agent != nil {
		id = env.Actor.Agent.TaskID
	}
	if id != "" {
		v, err := task.Describe(env.Store, id)
		if err != nil {
			return "", err
		}
		cmdutil.PrintTaskView(&b, v, env.Actor)
		return b.String(), nil
	}
	sum, err := task.Summarize(env.Store, false)
	if err != nil {
		return "", err
	}
	cmdutil.PrintSummary(&b, sum)
	return b.String(), nil
}

func historyTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	a := struct{ Tail *int }{}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	tail := 20
	if a.Tail != nil {
		tail = *a.Tail
	}
	t, err := cmdutil.Task(env.Store, env.Actor, "")
	if err != nil {
		return "", err
	}
	entries, err := phase.History(env.Store, t.ID, tail)
	if err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return "no messages yet in " + t.ID, nil
	}
	var b bytes.Buffer
	cmdutil.PrintHistory(&b, entries)
	return capText(b.String(), maxChat, true), nil
}

func phaseTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	var a struct {
		Name  string
		Limit int
		Roles []string
		Rules string
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	t, err := ownTask(env)
	if err != nil {
		return "", err
	}
	l, err := needLauncher(env)
	if err != nil {
		return "", err
	}
	ph, names, err := phase.Open(env.Store, l, env.Actor, phase.Spec{TaskID: t.ID, Name: a.Name, Limit: a.Limit, Roles: a.Roles, Rules: a.Rules})
	if ph == nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q open: limit %d", ph.ID, ph.Name, ph.MessageLimit)
	for i, n := range names {
		fmt.Fprintf(&b, ", @%s (%s)", n, ph.Roles[i])
	}
	return b.String(), err
}

func extendTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	var a struct{ N int }
	if err := decode(args, &a); err != nil {
		return "", err
	}
	t, ph, err := ownActivePhase(env, "open one with the phase tool")
	if err != nil {
		return "", err
	}
	out, err := phase.Extend(env.Store, env.Actor, t.ID, ph.ID, a.N)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s limit now %d", out.ID, out.MessageLimit), nil
}

func endTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	t, ph, err := ownActivePhase(env, "nothing to end; see the status tool")
	if err != nil {
		return "", err
	}
	out, err := phase.Close(env.Store, env.Actor, t.ID, ph.ID, store.CloseEnded)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %q closed early", out.ID, out.Name), nil
}

func subtaskTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	var a struct{ Description, Context string }
	if err := decode(args, &a); err != nil {
		return "", err
	}
	parent, err := ownTask(env)
	if err != nil {
		return "", err
	}
	l, err := needLauncher(env)
	if err != nil {
		return "", err
	}
	t, err := task.Subtask(env.Store, l, env.Actor, parent, a.Description, []byte(a.Context), "")
	if t == nil {
		return "", err
	}
	return fmt.Sprintf("%s %s owner @%s (subtask of %s, depth %d)", t.ID, t.Status, t.Owner, parent.ID, t.Depth), err
}

func waitChildrenTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	var a struct{ Timeout string }
	if err := decode(args, &a); err != nil {
		return "", err
	}
	var d time.Duration
	if a.Timeout != "" {
		var err error
		if d, err = time.ParseDuration(a.Timeout); err != nil || d < 0 {
			return "", errs.Usagef(`a duration such as "90s" or "30m"`, "bad timeout %q", a.Timeout)
		}
	}
	t, err := ownTask(env)
	if err != nil {
		return "", err
	}
	children, err := task.WaitChildren(ctx, env.Store, t.ID, d)
	var b strings.Builder
	for _, c := range children {
		fmt.Fprintf(&b, "%s %s %s\n", c.ID, c.Status, c.Description)
	}
	if err == nil {
		fmt.Fprintf(&b, "all %d subtasks of %s finished", len(children), t.ID)
	}
	return b.String(), err
}

func doneTool(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
	t, err := ownTask(env)
	if err != nil {
		return "", err
	}
	l, err := needLauncher(env)
	if err != nil {
		return "", err
	}
	res, err := task.Done(env.Store, l, env.Actor, t.ID)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	cmdutil.PrintDone(&b, t, res)
	return b.String(), nil
}
