package llmagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
)

// answerNext waits (on file events) for the next pending request, answers
// it as the human and returns it as it was asked.
func answerNext(t *testing.T, s *store.Store, answer string) <-chan *store.Request {
	t.Helper()
	out := make(chan *store.Request, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var got *store.Request
		_ = os.MkdirAll(s.RequestsDir(), 0o755)
		_ = watch.Until(ctx, func() []string { return []string{s.RequestsDir()} }, func() (bool, error) {
			rs, err := request.List(s, fsstate.New(s), false)
			if err != nil || len(rs) == 0 {
				return false, nil
			}
			got = rs[0]
			return true, nil
		})
		if got != nil {
			_, _ = request.Answer(s, fsstate.New(s), store.Human, got.ID, answer)
		}
		out <- got
	}()
	return out
}

// An owner whose model reads the same file again and again with the same
// result is paused before the 3rd read (governance.loop.repeat 3): the
// human is asked with the evidence, and the words they answer are the
// held call's result; the model then goes on and finishes.
func TestLoopBreakerPausesRepeatedCall(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Governance.Loop.Repeat = 3
	if err := os.WriteFile(filepath.Join(f.s.ProjectDir(), "notes.md"), []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, a := f.task(t, "Read the notes")
	read := tool("read_file", `{"path":"notes.md"}`)
	f.srv.Enqueue(read, read, read, tool("done", `{}`), text("Done."))
	asked := answerNext(t, f.s, "read it once, then finish")
	if err := f.r.Run(context.Background(), a, "# You are the owner"); err != nil {
		t.Fatal(err)
	}
	rq := <-asked
	if rq == nil || rq.Kind != request.KindLoop || rq.TaskID != tk.ID ||
		!strings.Contains(rq.Question, "called read_file 2 times in a row with the same arguments") ||
		!strings.Contains(rq.Question, `"stop"`) {
		t.Fatalf("request %+v", rq)
	}
	reqs := f.srv.Requests()
	held := reqs[3].LastMessage()
	if held.Role != "tool" || !strings.Contains(held.Content, "the human says: read it once, then finish") {
		t.Fatalf("the held call's result %+v", held)
	}
	if got, _ := f.s.Task(tk.ID); got.Status != store.TaskDone {
		t.Fatalf("task %s", got.Status)
	}
}

// "stop" stops the agent: Run ends with the loop's error, the human is told.
func TestLoopBreakerStop(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Governance.Loop.Repeat = 2
	_, a := f.task(t, "Check status")
	st := tool("history", `{}`)
	f.srv.Enqueue(st, st, st)
	asked := answerNext(t, f.s, "stop")
	err := f.r.Run(context.Background(), a, "# You are the owner")
	if err == nil || !strings.Contains(err.Error(), "loop: history called 1 time in a row") {
		t.Fatalf("Run = %v", err)
	}
	<-asked
	var told bool
	for _, m := range inboxOf(t, f.s, "human") {
		told = told || strings.Contains(m.Text, "stopped: loop: history")
	}
	if !told {
		t.Fatal("the human was not told")
	}
}

// A cascade back to an object that waits on it (greeter asked coordinator,
// which now calls greeter: greeter → coordinator → greeter) pauses the
// caller before the call is sent; the human's words are the refusal the
// model reads, and no request reaches greeter.
func TestLoopBreakerCascade(t *testing.T) {
	f := newFixture(t)
	set, err := prompt.LoadProject(f.s, fsstate.New(f.s))
	if err != nil {
		t.Fatal(err)
	}
	a, err := inbox.Resident(f.s, fsstate.New(f.s), set["coordinator"], "llm")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []inbox.Message{
		{Kind: inbox.KindRequest, From: "human", To: "greeter", Corr: "rq-0000c0", Text: "say hi to the coordinator"},
		{Kind: inbox.KindRequest, From: "greeter", To: "coordinator", Corr: "rq-0000c1", Cause: "rq-0000c0", Text: "hi! what can you do?"},
	} {
		if _, err := inbox.Send(f.s, f.r.State, m); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.Enqueue(tool("greeter", `{"message":"what can YOU do?"}`), text("I coordinate."))
	asked := answerNext(t, f.s, "answer greeter yourself")
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- f.r.Run(ctx, a, "# Coordinator") }()
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	var reply *inbox.Message
	if err := watch.Until(wctx, func() []string { return []string{f.s.AgentDir("greeter")} }, func() (bool, error) {
		for _, m := range inboxOf(t, f.s, "greeter") {
			if m.Kind == inbox.KindReply && m.Corr == "rq-0000c1" {
				reply = &m
			}
		}
		return reply != nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-ran
	rq := <-asked
	if rq == nil || rq.Kind != request.KindLoop || !strings.Contains(rq.Question, "@greeter → @coordinator → @greeter") {
		t.Fatalf("request %+v", rq)
	}
	if reply.Text != "I coordinate." {
		t.Fatalf("reply %+v", reply)
	}
	held := f.srv.Requests()[1].LastMessage()
	if !strings.Contains(held.Content, "refused (limit): loop: @greeter → @coordinator → @greeter; the human says: answer greeter yourself") {
		t.Fatalf("the model read %q", held.Content)
	}
	for _, m := range inboxOf(t, f.s, "greeter") {
		if m.Kind == inbox.KindRequest && m.From == "coordinator" {
			t.Fatalf("the call was sent: %+v", m)
		}
	}
}

// "stop" at the phases breaker stops an llm owner as at a repeated call:
// its run ends with the loop's error (the host gives it up, failed), not
// with a refusal its model reads and goes on past.
func TestLoopBreakerPhasesStop(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Governance.Loop.Phases = 1
	_, a := f.task(t, "Talk in circles")
	open := tool("phase", `{"name":"again","roles":["designer"],"limit":5}`)
	end := tool("end_phase", `{}`)
	f.srv.Enqueue(open, end, open, tool("history", `{}`), text("Going on."))
	asked := answerNext(t, f.s, "stop")
	err := f.r.Run(context.Background(), a, "# You are the owner")
	rq := <-asked
	if rq == nil || rq.Kind != request.KindLoop || !strings.Contains(rq.Question, "closed with no file changed") {
		t.Fatalf("request %+v", rq)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "stopped by the human (loop breaker): it opens another phase") {
		t.Fatalf("Run = %v", err)
	}
	if n := len(f.srv.Requests()); n > 3 {
		t.Fatalf("the model was called %d times: it went on after the stop", n)
	}
}
