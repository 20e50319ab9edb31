package llmagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/llmagent"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
	"github.com/plasmodium/pm/internal/watch"
)

// fixture is a state directory, a model server and a runner reaching it
// through the real go-openai client. Tasks are on runtime none, so nothing is
// spawned: the test runs each agent in-process with Runner.Run.
type fixture struct {
	s   *store.Store
	srv *openaitest.Server
	r   *llmagent.Runner
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "PM_MODEL": "test-model"}
	st := fsstate.New(s)
	r := &llmagent.Runner{Store: s, State: st, Launcher: &agent.Launcher{Store: s, State: st, Exe: "/nonexistent/pm"},
		Getenv: func(k string) string { return env[k] }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Retry: llm.RetryPolicy{MaxAttempts: 1}}
	return &fixture{s: s, srv: srv, r: r}
}

func (f *fixture) task(t *testing.T, desc string) (*store.Task, *store.Agent) {
	t.Helper()
	tk, err := task.Create(f.s, f.r.Launcher, store.Human, task.Spec{Description: desc, Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.s.Agent(tk.Owner)
	if err != nil {
		t.Fatal(err)
	}
	return tk, a
}

func tool(name, args string) openaitest.Reply {
	return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: name, Arguments: args}}}
}

func text(s string) openaitest.Reply { return openaitest.Reply{Content: s} }

func events(t *testing.T, s *store.Store, kind bus.Kind) []bus.Event {
	t.Helper()
	all, err := jsonl.ReadAll[bus.Event](s.EventsPath(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []bus.Event
	for _, ev := range all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func inboxOf(t *testing.T, s *store.Store, name string) []inbox.Message {
	t.Helper()
	ms, err := jsonl.ReadAll[inbox.Message](s.InboxPath(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// An owner drives its task: its rendered prompt is the system message, the task is
// its first user message, the done tool ends the task, and its usage is
// recorded on its agent record.
func TestOwnerFinishesTask(t *testing.T) {
	f := newFixture(t)
	tk, a := f.task(t, "Write the notes")
	f.srv.Enqueue(tool("done", `{}`), text("All done."))
	if err := f.r.Run(context.Background(), a, "# You are the owner"); err != nil {
		t.Fatal(err)
	}
	got, _ := f.s.Task(tk.ID)
	if got.Status != store.TaskDone {
		t.Fatalf("task %s", got.Status)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if m := reqs[0].Messages; m[0].Role != "system" || !strings.HasPrefix(m[0].Content, "# You are @"+a.Name+", owner of task "+tk.ID) || m[1].Content != "Begin. You own task "+tk.ID+": Write the notes" {
		t.Fatalf("first request %+v", m)
	}
	if last := reqs[1].LastMessage(); last.Role != "tool" || !strings.HasPrefix(last.Content, tk.ID+" done") {
		t.Fatalf("done's result %+v", last)
	}
	rec, _ := f.s.Agent(a.Name)
	if rec.Usage.Turns != 2 || rec.Usage.ToolCalls != 1 || rec.Usage.Tokens == 0 || rec.Activity != "idle" {
		t.Fatalf("record %+v", rec)
	}
	// Activity is on the bus once per change (working, then idle at the end),
	// not once per turn: the two turns were both "working".
	var acts []string
	for _, ev := range events(t, f.s, bus.EvAgentActivity) {
		if ev.Agent != a.Name || ev.TaskID != tk.ID {
			t.Fatalf("activity event %+v", ev)
		}
		acts = append(acts, ev.Text)
	}
	if strings.Join(acts, ",") != "working,idle" {
		t.Fatalf("activity events %v, want working,idle", acts)
	}
	if evs := events(t, f.s, bus.EvToolCall); len(evs) != 1 || evs[0].Text != "done {}" || evs[0].Agent != a.Name {
		t.Fatalf("tool.call events %+v", evs)
	}
	if n, _ := jsonl.Count(f.s.TranscriptPath(a.Name)); n != 4 {
		t.Fatalf("transcript has %d lines, want 4", n)
	}
}

// An owner that keeps answering without finishing is told to go on
// MaxNudges times, then stopped with an error.
func TestOwnerNudgedThenStopped(t *testing.T) {
	f := newFixture(t)
	tk, a := f.task(t, "Ship it")
	for range llmagent.MaxNudges + 1 {
		f.srv.Enqueue(text("Thinking about it."))
	}
	err := f.r.Run(context.Background(), a, "sys")
	if err == nil || !strings.Contains(err.Error(), "owner stopped 4 times without finishing task "+tk.ID) {
		t.Fatalf("Run = %v", err)
	}
	reqs := f.srv.Requests()
	if len(reqs) != llmagent.MaxNudges+1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if last := reqs[1].LastMessage(); !strings.Contains(last.Content, "Task "+tk.ID+" is still active") {
		t.Fatalf("nudge %+v", last)
	}
}

// A respawned owner (transcript on disk) resumes it: the earlier
// conversation goes back to the model, followed by a restart note.
func TestOwnerResumesTranscript(t *testing.T) {
	f := newFixture(t)
	tk, a := f.task(t, "Resume me")
	tr := transcript.Of(fsstate.New(f.s), a.Name)
	if err := tr.Append(
		openai.ChatCompletionMessage{Role: "user", Content: "Begin. You own task " + tk.ID + ": Resume me"},
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "think", Arguments: `{"thought":"x"}`}}}},
	); err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue(tool("done", `{}`), text("Done."))
	if err := f.r.Run(context.Background(), a, "sys"); err != nil {
		t.Fatal(err)
	}
	m := f.srv.Requests()[0].Messages
	if len(m) != 5 || m[1].Content != "Begin. You own task "+tk.ID+": Resume me" || m[2].ToolCalls[0].Name != "think" ||
		m[3].Role != "tool" || !strings.Contains(m[3].Content, "interrupted") || !strings.HasPrefix(m[4].Content, "You were restarted.") {
		t.Fatalf("resumed request %+v", m)
	}
}

// The agent budget stops a runaway model: the stop is an event, a notice to
// the human and (for a role agent) to the task's owner.
func TestAgentBudgetStopsRoleAgent(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Budgets.Agent = config.Budget{MaxToolCalls: 2}
	tk, owner := f.task(t, "Discuss")
	ph, err := phase.Create(f.s, fsstate.New(f.s), store.Actor{Name: owner.Name, Agent: owner}, phase.Spec{TaskID: tk.ID, Name: "Talk", Limit: 20, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	role, err := agent.New(f.s, fsstate.New(f.s), store.Agent{Prompt: "designer", Role: "designer", TaskID: tk.ID, PhaseID: ph.ID, Runtime: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Handle(func(openaitest.Request) openaitest.Reply { return tool("think", `{"thought":"again"}`) })
	err = f.r.Run(context.Background(), role, "sys")
	var be *llm.BudgetError
	if !errors.As(err, &be) || be.What != llm.BudgetToolCalls {
		t.Fatalf("Run = %v", err)
	}
	if evs := events(t, f.s, bus.EvAgentBudget); len(evs) != 1 || evs[0].Agent != role.Name || evs[0].Text != "@"+role.Name+" stopped: budget exceeded: tool calls 3 of 2" {
		t.Fatalf("agent.budget %+v", evs)
	}
	for _, to := range []string{owner.Name, "human"} {
		ms := inboxOf(t, f.s, to)
		if len(ms) != 1 || ms[0].Kind != inbox.KindNotice || ms[0].From != role.Name || !strings.Contains(ms[0].Text, "budget exceeded") {
			t.Fatalf("%s's inbox %+v", to, ms)
		}
	}
	if n := len(events(t, f.s, bus.EvAgentThink)); n != 2 {
		t.Fatalf("%d thoughts ran, want 2", n)
	}
}

// The task budget is the sum over the task's agents, checked before each
// model turn: what another agent spent counts, and no request is made.
func TestTaskBudgetCountsEveryAgent(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Budgets.Task = config.Budget{MaxTurns: 5}
	tk, a := f.task(t, "Shared budget")
	other, err := agent.New(f.s, fsstate.New(f.s), store.Agent{Prompt: "designer", Role: "designer", TaskID: tk.ID, Runtime: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.UpdateAgent(other.Name, func(x *store.Agent) error { x.Usage.Turns = 5; return nil }); err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue(text("never asked"))
	err = f.r.Run(context.Background(), a, "sys")
	var be *llm.BudgetError
	if !errors.As(err, &be) || be.What != "task "+llm.BudgetTurns || be.Used != 5 {
		t.Fatalf("Run = %v", err)
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Fatalf("%d requests made past the task budget", n)
	}
	if ms := inboxOf(t, f.s, "human"); len(ms) != 1 || !strings.Contains(ms[0].Text, "task model turns 5 of 5") {
		t.Fatalf("human inbox %+v", ms)
	}
}

// A role agent speaks when it enters, is woken by someone else's message
// (never by its own), and leaves when its phase closes.
func TestRoleAgentInTheRoom(t *testing.T) {
	f := newFixture(t)
	tk, owner := f.task(t, "Design it")
	ph, err := phase.Create(f.s, fsstate.New(f.s), store.Actor{Name: owner.Name, Agent: owner}, phase.Spec{TaskID: tk.ID, Name: "Design", Limit: 10, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	role, err := agent.New(f.s, fsstate.New(f.s), store.Agent{Prompt: "designer", Role: "designer", TaskID: tk.ID, PhaseID: ph.ID, Runtime: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan openaitest.Request, 10)
	replies := []openaitest.Reply{tool("say", `{"message":"Big hero, little text."}`), text("Said it."), text("PASS")}
	f.srv.Handle(func(req openaitest.Request) openaitest.Reply {
		n := len(f.srv.Requests())
		seen <- req
		return replies[min(n, len(replies))-1]
	})
	ran := make(chan error, 1)
	go func() { ran <- f.r.Run(context.Background(), role, "sys") }()
	<-seen
	<-seen // entered the room and spoke; now it waits for others
	if _, _, err := phase.Say(f.s, fsstate.New(f.s), store.Actor{Name: owner.Name, Agent: owner}, tk.ID, ph.ID, "What about the footer?"); err != nil {
		t.Fatal(err)
	}
	woken := <-seen
	if c := woken.LastMessage().Content; !strings.HasPrefix(c, "New in the room:\n") || !strings.Contains(c, "@"+owner.Name+": What about the footer?") {
		t.Fatalf("wake-up message %q", c)
	}
	// Wait until it is idle in the room again, then close the phase.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = watch.Until(ctx, func() []string { return []string{f.s.AgentDir(role.Name)} }, func() (bool, error) {
		n, _ := jsonl.Count(f.s.TranscriptPath(role.Name))
		return n == 6, nil
	})
	if _, err := phase.Close(f.s, fsstate.New(f.s), store.Human, tk.ID, ph.ID, "ended"); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v, want nil when the room closes", err)
	}
	if n := len(f.srv.Requests()); n != 3 {
		t.Fatalf("%d requests: woken by its own message?", n)
	}
	msgs, _ := jsonl.ReadAll[store.Message](f.s.MessagesPath(tk.ID, ph.ID), nil)
	if len(msgs) != 2 || msgs[0].Author != role.Name || msgs[0].Role != "designer" {
		t.Fatalf("messages %+v", msgs)
	}
	// Its model text streamed onto the bus, each response ended by agent.turn
	// with the usage so far (the dashboard's rooms and usage follow these).
	tail, _, err := f.s.Bus().Tail(1000)
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	var turns []any
	for _, d := range tail {
		switch {
		case d.Event.Agent != role.Name:
		case d.Event.Kind == bus.EvAgentOutput:
			streamed.WriteString(d.Event.Text)
		case d.Event.Kind == bus.EvAgentTurn:
			d, _ := d.Event.Data.(bus.AgentTurn)
			turns = append(turns, d.Turns)
		}
	}
	if streamed.String() != "Said it.PASS" {
		t.Errorf("streamed text %q, want the two text replies", streamed.String())
	}
	if fmt.Sprint(turns) != "[1 2 3]" {
		t.Errorf("agent.turn usage %v, want [1 2 3]", turns)
	}
}

// A resident object answers its inbox: the reply goes to the caller's inbox,
// its text is streamed to stream.jsonl, and it keeps serving until stopped.
func TestResidentServes(t *testing.T) {
	f := newFixture(t)
	set, err := prompt.LoadProject(f.s, fsstate.New(f.s))
	if err != nil {
		t.Fatal(err)
	}
	a, err := inbox.Resident(f.s, fsstate.New(f.s), set["greeter"], "llm")
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue(text("Hello there, Ada!"))
	if _, err := inbox.Send(f.s, f.r.State, inbox.Message{Kind: inbox.KindRequest, From: "human", To: "greeter", Corr: "rq-0000aa", Text: "I am Ada"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- f.r.Run(ctx, a, "# Greeter") }()
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	if err := os.MkdirAll(f.s.AgentDir("human"), 0o755); err != nil {
		t.Fatal(err)
	}
	var reply []inbox.Message
	if err := watch.Until(wctx, func() []string { return []string{f.s.AgentDir("human")} }, func() (bool, error) {
		reply, _ = jsonl.ReadAll[inbox.Message](f.s.InboxPath("human"), nil)
		return len(reply) > 0, nil
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	if r := reply[0]; r.Kind != inbox.KindReply || r.Corr != "rq-0000aa" || r.Text != "Hello there, Ada!" || r.Error != "" {
		t.Fatalf("reply %+v", r)
	}
	if got := f.srv.Requests()[0].LastMessage().Content; got != "Message from the human:\nI am Ada" {
		t.Fatalf("request %q", got)
	}
	deltas, _ := jsonl.ReadAll[inbox.Delta](f.s.StreamPath("greeter"), nil)
	var b strings.Builder
	for _, d := range deltas {
		if d.Corr != "rq-0000aa" {
			t.Fatalf("delta %+v", d)
		}
		b.WriteString(d.Text)
	}
	// The pieces that come while a write is in flight go out together
	// (inbox.Streamer, tested there piece by piece): their number here
	// depends on timing, their text does not.
	if b.String() != "Hello there, Ada!" || len(deltas) < 1 {
		t.Fatalf("streamed %q in %d deltas", b.String(), len(deltas))
	}
}

// With no provider, Run says what to set and asks nothing.
func TestNoProvider(t *testing.T) {
	f := newFixture(t)
	f.r.Getenv = func(string) string { return "" }
	_, a := f.task(t, "x")
	if err := f.r.Run(context.Background(), a, "sys"); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "PM_MODEL") {
		t.Fatalf("Run = %v", err)
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Fatal("a request without a provider")
	}
}

// The task's wall-time budget counts from the task's creation: an old task
// stops its agents before they ask the model anything.
func TestTaskWallBudget(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Budgets.Task = config.Budget{MaxWallSeconds: 60}
	tk, a := f.task(t, "Old task")
	if _, err := f.s.UpdateTask(tk.ID, func(x *store.Task) error { x.CreatedAt = x.CreatedAt.Add(-2 * time.Minute); return nil }); err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue(text("never asked"))
	err := f.r.Run(context.Background(), a, "sys")
	var be *llm.BudgetError
	if !errors.As(err, &be) || !strings.HasPrefix(be.What, "task "+llm.BudgetWall) || be.Used < 60 {
		t.Fatalf("Run = %v", err)
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Fatalf("%d requests made past the task's wall time", n)
	}
}

// A transcript pushed past limits.transcript_bytes keeps at most it, and
// the agent resumes it cleanly: the model server (which refuses a tool
// result whose call is not before it, as OpenAI's does) takes the cut
// conversation, which opens with pm's mark of what was dropped, then a
// turn's or step's start; and the loop's own appends, past the bound
// again while it runs, keep it so, in the transcript and in what the
// running loop sends the model alike (each request at most the bound and
// one step: it used to send all it had appended since its start).
func TestOwnerResumesACutTranscript(t *testing.T) {
	f := newFixture(t)
	const bound = 16 << 10
	f.s.Config().Limits.TranscriptBytes = bound
	tk, a := f.task(t, "Resume me, cut")
	st := fsstate.New(f.s)
	tr := transcript.Of(st, a.Name)
	pad := strings.Repeat("p", 600)
	for i := range 40 { // ~60 KiB of earlier turns
		id := fmt.Sprint("call_", i)
		if err := tr.Append(
			openai.ChatCompletionMessage{Role: "user", Content: fmt.Sprint("turn ", i, " ", pad)},
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function", Function: openai.FunctionCall{Name: "think", Arguments: `{"thought":"x"}`}}}},
			openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: "noted " + pad},
			openai.ChatCompletionMessage{Role: "assistant", Content: fmt.Sprint("answer ", i)},
		); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 { // the run itself goes past the bound again: one long turn of steps
		f.srv.Enqueue(tool("think", fmt.Sprintf(`{"thought":"%d %s"}`, i, pad)))
	}
	f.srv.Enqueue(tool("done", `{}`), text("Done."))
	if err := f.r.Run(context.Background(), a, "sys"); err != nil {
		t.Fatal(err)
	}
	for i, r := range f.srv.Requests() {
		n := 0
		for _, m := range r.Messages[1:] { // the system prompt is no part of the transcript
			b, _ := json.Marshal(m)
			n += len(b)
		}
		if n > bound+2<<10 {
			t.Fatalf("request %d of the run sends %d bytes of conversation, over the %d byte bound and a step", i, n, bound)
		}
	}
	m := f.srv.Requests()[0].Messages
	if len(m) < 3 || m[1].Role != "user" || !strings.HasPrefix(m[1].Content, "[pm dropped the first ") {
		t.Fatalf("the resumed conversation opens with %+v, want pm's mark", m[:min(2, len(m))])
	}
	if m[2].Role != "user" || !strings.HasPrefix(m[2].Content, "turn ") {
		t.Fatalf("after the mark, %+v: want a turn's start", m[2])
	}
	if last := m[len(m)-2]; last.Content != "answer 39" {
		t.Fatalf("the resumed conversation ends with %+v before the restart note, want the last answer", last)
	}
	if got, _ := f.s.Task(tk.ID); got.Status != store.TaskDone {
		t.Fatalf("task %s", got.Status)
	}
	fi, err := os.Stat(f.s.TranscriptPath(a.Name))
	if err != nil || fi.Size() > bound {
		t.Fatalf("transcript of %v bytes (%v), over the %d byte bound", fi.Size(), err, bound)
	}
	msgs, err := tr.Load()
	if err != nil || len(msgs) < 2 || !strings.HasPrefix(msgs[0].Content, "[pm dropped the first ") || msgs[len(msgs)-1].Content != "Done." {
		t.Fatalf("the transcript after the run: %d messages (%v), first %+v", len(msgs), err, msgs[:min(1, len(msgs))])
	}
	if r := msgs[1].Role; r == "tool" {
		t.Fatalf("the transcript after the run opens with a tool result: %+v", msgs[1])
	}
}
