package agentrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
	"github.com/plasmodium/pm/internal/watch"
)

// An exec agent's pm command run again with the same output pauses on a
// request to the human before the limit-th run; a denial refuses it
// (exit 3) with the human's words; "yes" runs it and counts again.
func TestExecRepeatsPause(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	st := fsstate.New(s)
	tk, err := task.Create(s, &agent.Launcher{Store: s, State: st, Exe: "/nonexistent/pm"}, store.Human, task.Spec{Description: "loop", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	ran, halted := 0, ""
	halt := func(reason string) { halted = reason }
	run := guardRepeats(s, st, tk.Owner, 3, halt, func(ctx context.Context, args []string, stdio broker.Stdio) int {
		ran++
		fmt.Fprintln(stdio.Out, "nothing new")
		return 0
	})
	call := func() (int, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"status"}, broker.Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
		return code, errOut.String()
	}
	call()
	call()
	answered := answerNext(t, s, "wait for the subtask instead")
	code, stderr := call()
	rq := <-answered
	if code != 3 || !strings.Contains(stderr, "the human says: wait for the subtask instead") || !strings.Contains(stderr, "Try: ") || ran != 2 {
		t.Fatalf("exit %d, stderr %q, ran %d", code, stderr, ran)
	}
	if rq.Kind != request.KindLoop || rq.From != tk.Owner || !strings.Contains(rq.Question, "ran `pm [\"status\"]` 2 times in a row with the same output") {
		t.Fatalf("request %+v", rq)
	}
	answered = answerNext(t, s, "yes")
	if code, _ := call(); code != 0 || ran != 3 {
		t.Fatalf("after yes: exit %d, ran %d", code, ran)
	}
	<-answered
	if code, _ := call(); code != 0 || ran != 4 { // the 2nd of a new row
		t.Fatalf("exit %d, ran %d", code, ran)
	}
	if halted != "" {
		t.Fatalf("halted without a stop: %q", halted)
	}
	// "stop" refuses the command and halts the agent through its host.
	answered = answerNext(t, s, "stop")
	code, stderr = call()
	<-answered
	if code != 3 || ran != 4 || !strings.Contains(stderr, "stop working on this") {
		t.Fatalf("after stop: exit %d, ran %d, stderr %q", code, ran, stderr)
	}
	if !strings.HasPrefix(halted, "stopped by the human (loop breaker): it ran `pm [\"status\"]` 2 times") {
		t.Fatalf("halt reason %q", halted)
	}
}

// answerNext answers the next pending request (woken by file events).
func answerNext(t *testing.T, s *store.Store, answer string) <-chan *store.Request {
	out := make(chan *store.Request, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var got *store.Request
		_ = os.MkdirAll(s.RequestsDir(), 0o755)
		_ = watch.Until(ctx, func() []string { return []string{s.RequestsDir()} }, func() (bool, error) {
			rs, err := request.List(s, fsstate.New(s), false)
			if err == nil && len(rs) > 0 {
				got = rs[0]
			}
			return got != nil, nil
		})
		if got != nil {
			_, _ = request.Answer(s, fsstate.New(s), store.Human, got.ID, answer)
		}
		out <- got
	}()
	return out
}
