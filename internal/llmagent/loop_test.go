package llmagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/request"
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
			rs, err := request.List(s, false)
			if err != nil || len(rs) == 0 {
				return false, nil
			}
			got = rs[0]
			return true, nil
		})
		if got != nil {
			_, _ = request.Answer(s, store.Human, got.ID, answer)
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
