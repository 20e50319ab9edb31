package llmagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// MaxNudges is how many times an owner that stops talking without finishing
// its task is told to go on before it is stopped.
const MaxNudges = 3

// Runner runs one agent on the built-in model loop, in the host process.
type Runner struct {
	Store    *store.Store
	State    state.State // the project's records, opened with the store
	Launcher *agent.Launcher
	Getenv   func(string) string
	Log      *slog.Logger
	// Retry overrides the model retry policy (tests); zero: llm defaults.
	Retry llm.RetryPolicy

	reload func() // re-reads the prompt object before each run
	// serving is the request a resident is answering (bus.CauseOf of its
	// handler): its tool calls carry it as their cause.
	serving atomic.Value // string
	// messaging are the tools whose call is itself a message on the bus (a
	// prompt object's request and reply, ask_human's question and answer):
	// their tool events say so (bus.ToolCall.Message), so a log shows it once.
	messaging atomic.Value // map[string]bool
	// spend is the agent's dollars (cost.go), set by Run.
	spend *spend
}

// Run plays agent a with the rendered prompt as its system message: an owner
// drives its task, a role agent takes part in its phase until it closes, a
// resident prompt object answers its inbox.
func (r *Runner) Run(ctx context.Context, a *store.Agent, system string) error {
	return r.RunFenced(ctx, a, system, nil)
}

// RunFenced is Run whose tools' room appends carry fence, the host's hold
// on the agent's lease (agent.LLMFunc): on a hub, a say of a host that
// lost the lease is refused by the hub itself.
func (r *Runner) RunFenced(ctx context.Context, a *store.Agent, system string, fence state.AgentLease) error {
	s := r.Store
	set, err := prompt.LoadProject(s, r.State)
	if err != nil {
		return err
	}
	obj, err := set.Lookup(a.Prompt)
	if err != nil {
		return err
	}
	model := a.Model
	if model == "" {
		model = obj.Model
	}
	prov, err := llm.ProviderFromEnvKey(r.Getenv, s.Config().Model.APIKeyEnv, s.Config().Model.BaseURL, s.Config().Model.Name, model)
	if err != nil {
		return err
	}
	s.Secrets.Add(prov.APIKey)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	env := &capability.Env{
		Store: s, State: r.State, Actor: store.Actor{Name: a.Name, Agent: a}, Launcher: r.Launcher, Workspace: agent.WorkDir(s, r.State, a.TaskID), Getenv: r.Getenv,
		CallPO: func(ctx context.Context, to, msg string) (string, error) {
			if err := r.cascade(ctx, a, to, cancel); err != nil {
				return "", err
			}
			r.activity(a.Name, agent.ActivityWaiting)
			defer r.activity(a.Name, agent.ActivityWorking)
			return inbox.Call(ctx, s, r.Launcher, a.Name, to, msg, nil)
		},
		OnThink: func(t string) {
			s.Notify(agentEvent(a, bus.EvAgentThink, s.Secrets.Mask(t), nil))
		},
		// The loop breaker's "stop" in an operation (a phase opened
		// without progress) ends this run as a cascade's stop does.
		Halt:  func(reason string) { cancel(&LoopError{Reason: reason}) },
		Fence: fence,
	}
	tools, err := r.tools(env, set, obj, a.Name)
	if err != nil {
		return err
	}
	loop := &llm.Loop{
		Provider: prov, Tools: tools, System: system, Secrets: s.Secrets,
		Transcript: transcript.Of(r.State, a.Name),
		// The history the loop sends is kept as the transcript is
		// (limits.transcript_bytes), however long this run goes.
		HistoryBytes: state.LogBoundsOf(s.Config()).Transcript,
		Budget:       budget(s.Config().Budgets.Agent),
		Used:         llm.Counters{Turns: a.Usage.Turns, ToolCalls: a.Usage.ToolCalls, Tokens: a.Usage.Tokens},
		Retry:        retryPolicy(r.Retry, s.Config().Model),
		// Tools such as chat wait, wait_children and ask_human block on
		// other agents or the human; the budgets bound the agent instead.
		ToolTimeout:       24 * time.Hour,
		CallTimeout:       time.Duration(s.Config().Model.TimeoutSeconds) * time.Second,
		MaxResponseTokens: s.Config().Model.MaxTokens,
	}
	if a.StartedAt != nil && a.Restarts > 0 && a.CreatedAt.Before(*a.StartedAt) {
		loop.Started = a.CreatedAt // wall time counts from the agent's birth across respawns
	}
	var out *output
	if a.TaskID != "" { // a resident's reply streams to its caller (serve)
		out = newOutput(s, a)
		loop.OnDelta = out.delta
	}
	r.spend = newSpend(prov.Model, a.Usage)
	r.spend.window = state.NewCostWindow(r.State)
	loop.Before = r.before(a, r.spend)
	r.loopBreaker(a, loop)
	loop.OnEvent = r.onEvent(a, out)
	r.decideMode(a, obj)
	previews := r.docPreviews()
	r.reload = func() {
		r.applyMode(a.Name, loop, previews)
		// Hot reload: a prompt file edited (or a capability created) since the
		// last turn takes effect on the next one.
		set, err := prompt.LoadProject(s, r.State)
		if err != nil {
			r.Log.Warn("prompt reload failed; keeping the loaded one", "err", err)
			return
		}
		obj, err := set.Lookup(a.Prompt)
		if err != nil {
			return
		}
		text, err := agent.RenderObject(s, r.State, a, obj)
		if err != nil {
			return
		}
		if tools, err := r.tools(env, set, obj, a.Name); err == nil {
			loop.Tools, loop.System = tools, text
		}
	}
	resumed, err := transcript.Of(r.State, a.Name).Started()
	if err != nil {
		return err
	}
	r.activity(a.Name, agent.ActivityWorking)
	defer r.activity(a.Name, agent.ActivityIdle)
	switch {
	case a.TaskID == "":
		err = r.serve(ctx, a, loop)
	case a.Role == "":
		err = r.own(ctx, a, loop, resumed)
	default:
		err = r.discuss(ctx, a, loop, resumed)
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	var be *llm.BudgetError
	var re *llm.RepeatError
	var le *LoopError
	switch {
	case errors.As(err, &be):
		r.budgetStop(a, be)
	case errors.As(err, &re):
		r.tell(a, fmt.Sprintf("@%s stopped: %v", a.Name, re))
	case errors.As(err, &le):
		r.tell(a, fmt.Sprintf("@%s stopped: %v", a.Name, le))
	}
	return err
}

func budget(b config.Budget) llm.Budget {
	return llm.Budget{MaxTurns: b.MaxTurns, MaxToolCalls: b.MaxToolCalls, MaxTokens: b.MaxTokens,
		MaxWall: time.Duration(b.MaxWallSeconds) * time.Second}
}

// own drives the owner's workflow until its task is no longer active.
func (r *Runner) own(ctx context.Context, a *store.Agent, loop *llm.Loop, resumed bool) error {
	t, err := r.State.Task(a.TaskID)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf(ownerBegin, t.ID, t.Description)
	if resumed {
		msg = "You were restarted. Check status and history, then continue where you left off."
	}
	if note := agent.ResumeNoteOf(ctx); note != "" {
		msg = note // resumed by the human's answer: their words first
	}
	for nudge := 0; ; nudge++ {
		r.reload()
		if _, err := loop.Run(ctx, msg); err != nil {
			return err
		}
		t, err := r.State.Task(a.TaskID)
		if err != nil {
			return err
		}
		if t.Status != store.TaskActive {
			return nil
		}
		if nudge >= MaxNudges {
			return fmt.Errorf("owner stopped %d times without finishing task %s", nudge+1, t.ID)
		}
		msg = fmt.Sprintf("Task %s is still active. Continue your workflow; when the work is verified, call done.", t.ID)
	}
}

// discuss keeps a role agent in its room: it speaks when woken by someone
// else's message and leaves when the phase closes. It is never woken by its
// own message, so it cannot answer itself in a loop.
func (r *Runner) discuss(ctx context.Context, a *store.Agent, loop *llm.Loop, resumed bool) error {
	s := r.Store
	ph, err := r.State.Phase(a.TaskID, a.PhaseID)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf(roleEnter, ph.Name)
	if resumed {
		msg = ""
	}
	actor := store.Actor{Name: a.Name, Agent: a}
	for {
		if ph.Status != store.PhaseActive {
			return nil
		}
		if msg != "" || resumed {
			r.reload()
			if _, err := loop.Run(ctx, msg); err != nil {
				return err
			}
			resumed = false
		}
		r.activity(a.Name, agent.ActivityIdle)
		w, err := phase.WaitNew(ctx, s, r.State, actor, ph)
		r.activity(a.Name, agent.ActivityWorking)
		switch {
		case err == nil && !w.Closed:
		case err == nil, errs.Is(err, errs.State), ctx.Err() != nil:
			return nil // the room closed (or we were stopped): leave it
		default:
			return err // a failed wait is a crash, so the supervisor brings us back
		}
		var b strings.Builder
		b.WriteString(roomNew)
		for _, m := range w.Messages() {
			who := "@" + m.Author
			if m.Role != "" {
				who += " (" + m.Role + ")"
			}
			fmt.Fprintf(&b, "%s: %s\n", who, m.Content)
		}
		b.WriteString(roomAsk)
		msg = b.String()
		if p, err := r.State.Phase(a.TaskID, a.PhaseID); err == nil {
			ph = p
		}
	}
}

// serve answers the resident object's inbox, one request at a time.
// After runtime.resident_idle with no message it leaves (inbox.IdleOut),
// and the next call starts it again.
func (r *Runner) serve(ctx context.Context, a *store.Agent, loop *llm.Loop) error {
	r.activity(a.Name, agent.ActivityIdle)
	debug.FreeOSMemory()
	ctx, idle := r.idleOut(ctx, a)
	defer idle.Close()
	err := inbox.Serve(ctx, r.Store, r.State, a.Name, func(ctx context.Context, m inbox.Message) (string, error) {
		idle.Stop()
		defer idle.Reset()
		r.serving.Store(bus.CauseOf(ctx))
		defer r.serving.Store("")
		r.activity(a.Name, agent.ActivityWorking)
		defer r.activity(a.Name, agent.ActivityIdle)
		// An idle resident should hold as little memory as it can: give the
		// turn's garbage back to the OS once the reply is out (not before it:
		// a forced GC on the reply's path would add to the caller's wait).
		defer func() { time.AfterFunc(100*time.Millisecond, debug.FreeOSMemory) }()
		// A resident serves many callers: its budget bounds each request, so
		// one caller cannot spend it for all the others.
		loop.Used, loop.Started = llm.Counters{}, time.Time{}
		r.spend.reset()
		// Stream the reply's text for callers that show it as it comes (pm talk).
		// Off the loop's path: a synced write per model chunk would slow
		// the reply on a hub (inbox.Streamer).
		streamer := inbox.NewStreamer(r.State, a.Name, m.Corr)
		loop.OnDelta = streamer.Add
		defer func() { loop.OnDelta = nil }()
		r.reload()
		reply, err := loop.Run(ctx, inbox.Format(m))
		if serr := streamer.Close(); serr != nil { // every piece out before the reply
			r.Log.Warn("stream the reply", "err", serr)
		}
		return reply, err
	}, nil)
	if errors.Is(context.Cause(ctx), errIdle) {
		return nil // recorded exited (idle) already: leave quietly
	}
	return err
}

// onEvent records usage, its cost and activity, and puts tool calls and the
// end of each response with the usage (and out's streamed text, when out is
// not nil) on the bus. The budgets the loop cannot see are checked before
// each model call (Loop.Before: cost.go).
func (r *Runner) onEvent(a *store.Agent, out *output) func(llm.Event) {
	s := r.Store
	return func(ev llm.Event) {
		switch ev.Kind {
		case llm.EventResponse:
			e := r.record(a, r.spend, ev)
			if out != nil {
				out.end()
			}
			s.Notify(turnEvent(a, ev.Used, e))
		case llm.EventToolCall:
			cause, message := r.cause(ev.Tool)
			s.Notify(agentEvent(a, bus.EvToolCall, ev.Tool+" "+clip(ev.Args, 300), bus.ToolCall{Cause: cause, Message: message}))
		case llm.EventToolResult:
			cause, message := r.cause(ev.Tool)
			s.Notify(agentEvent(a, bus.EvToolResult, ev.Tool+": "+clip(ev.Text, 300),
				bus.ToolResult{Cause: cause, Message: message, Error: ev.IsError || refused(ev.Text)}))
		case llm.EventDocPreview, llm.EventDocDecision:
			s.Notify(docEvent(a, ev))
		case llm.EventRetry:
			if out != nil {
				out.retry()
			}
			r.Log.Warn("model call retry", "attempt", ev.Attempt, "delay", ev.Delay, "status", ev.Status, "err", ev.Text)
		case llm.EventCut:
			// The model reads the mark too; the agent's log says when.
			r.Log.Info("conversation cut to limits.transcript_bytes", "mark", ev.Text)
		}
	}
}

// cause is what a tool event of tool carries: the request being answered,
// if any, and whether the tool's call is a message of its own.
func (r *Runner) cause(tool string) (cause string, message bool) {
	cause, _ = r.serving.Load().(string)
	m, _ := r.messaging.Load().(map[string]bool)
	return cause, m[tool]
}

// waiting tools block on someone else; while they run the agent is "waiting".
var waiting = map[string]bool{"ask_human": true, "wait_children": true}

// tools builds the agent's tools, marking it waiting while a blocking one runs.
func (r *Runner) tools(env *capability.Env, set prompt.Set, obj *prompt.Object, name string) ([]llm.Tool, error) {
	tools, err := capability.Tools(env, obj)
	if err != nil {
		return nil, err
	}
	messaging := map[string]bool{"ask_human": true}
	for _, t := range tools {
		if _, ok := set[t.Name]; ok {
			messaging[t.Name] = true // a prompt object: a request and a reply on the bus
		}
	}
	r.messaging.Store(messaging)
	for i, t := range tools {
		if !waiting[t.Name] {
			continue
		}
		call := t.Call
		tools[i].Call = func(ctx context.Context, args json.RawMessage) (string, error) {
			r.activity(name, agent.ActivityWaiting)
			defer r.activity(name, agent.ActivityWorking)
			return call(ctx, args)
		}
	}
	return tools, nil
}

// refused reports a tool result that is a refusal in capability's words
// (capabilities return refusals as text so the model can react to them).
func refused(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		for _, p := range []string{"error: ", "refused (limit): ", "wrong state: ", "not found: ", "bad arguments: ", "timed out: "} {
			if strings.HasPrefix(line, p) {
				return true
			}
		}
	}
	return false
}

// taskBudget sums what every agent of the task has spent.
func (r *Runner) taskBudget(a *store.Agent) *llm.BudgetError {
	lim := r.Store.Config().Budgets.Task
	if a.TaskID == "" {
		return nil
	}
	agents, err := r.State.Agents()
	if err != nil {
		return nil
	}
	var u store.Usage
	for _, x := range agents {
		if x.TaskID == a.TaskID {
			u.Turns += x.Usage.Turns
			u.ToolCalls += x.Usage.ToolCalls
			u.Tokens += x.Usage.Tokens
		}
	}
	for _, c := range []struct {
		what       string
		limit, use int64
	}{{"task " + llm.BudgetTurns, int64(lim.MaxTurns), u.Turns}, {"task " + llm.BudgetToolCalls, int64(lim.MaxToolCalls), u.ToolCalls},
		{"task " + llm.BudgetTokens, int64(lim.MaxTokens), u.Tokens}} {
		if c.limit > 0 && c.use >= c.limit {
			return &llm.BudgetError{What: c.what, Limit: c.limit, Used: c.use}
		}
	}
	// Wall time of the task: from its creation, across all its agents.
	if lim.MaxWallSeconds > 0 {
		if t, err := r.State.Task(a.TaskID); err == nil {
			if used := r.Store.Now().Sub(t.CreatedAt); used >= time.Duration(lim.MaxWallSeconds)*time.Second {
				return &llm.BudgetError{What: "task " + llm.BudgetWall + " (seconds)", Limit: int64(lim.MaxWallSeconds), Used: int64(used.Seconds())}
			}
		}
	}
	return nil
}

// budgetStop records why the agent stopped and tells whoever must act: the
// task's owner (for a role agent) and the human.
func (r *Runner) budgetStop(a *store.Agent, be *llm.BudgetError) {
	s := r.Store
	text := fmt.Sprintf("@%s stopped: %v", a.Name, be) // be says "budget exceeded: ..."
	s.Notify(agentEvent(a, bus.EvAgentBudget, text, nil))
	r.tell(a, text)
}

// tell sends why the agent stopped to whoever must act: the task's owner
// (for a role agent) and the human (task.TellStopped, as for an exec role).
func (r *Runner) tell(a *store.Agent, text string) {
	task.TellStopped(r.Store, r.State, a, text)
}

// activity records what the agent is doing (agent.SetActivity, the one
// writer for both runtimes).
func (r *Runner) activity(name, what string) { agent.SetActivity(r.Store, r.State, name, what) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// retryPolicy is the model call's retry policy: the runner's (tests) when it
// sets one, else model.retries from config (nil: llm's default).
func retryPolicy(set llm.RetryPolicy, m config.Model) llm.RetryPolicy {
	if set != (llm.RetryPolicy{}) || m.Retries == nil {
		return set
	}
	set.MaxAttempts = *m.Retries + 1
	return set
}
