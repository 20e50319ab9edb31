package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/plasmodium/pm/internal/loopguard"
	"github.com/plasmodium/pm/internal/openaitest"
)

// loopingModel scripts a model that calls tool with the same arguments n
// times (one call per response), then answers done.
func loopingModel(srv *openaitest.Server, tool, args string, n int) {
	for range n {
		srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: tool, Arguments: args}}})
	}
	srv.Enqueue(openaitest.Reply{Content: "done"})
}

// The loop breaker holds the Limit-th identical call with the same result:
// the host is asked, and its refusal is the call's result; the calls before
// ran, the held one did not.
func TestRepeatHeldAndRefused(t *testing.T) {
	srv := startServer(t)
	loopingModel(srv, "read", `{"text":"a"}`, 3)
	rec := &recorder{}
	var ran atomic.Int32
	tool := echoTool("read")
	call := tool.Call
	tool.Call = func(ctx context.Context, args json.RawMessage) (string, error) { ran.Add(1); return call(ctx, args) }
	l := newLoop(srv, rec, tool)
	l.Repeats = &loopguard.Guard{Limit: 3}
	var hits []loopguard.Hit
	l.OnRepeat = func(ctx context.Context, h loopguard.Hit) (string, error) {
		hits = append(hits, h)
		return "error: not run: the human says: stop reading a", nil
	}
	got, err := l.Run(ctxT(t), "go")
	if err != nil || got != "done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if ran.Load() != 2 {
		t.Errorf("the tool ran %d times, want 2 (the third was held)", ran.Load())
	}
	if len(hits) != 1 || hits[0].Name != "read" || hits[0].Times != 2 || hits[0].Args != `{"text":"a"}` {
		t.Errorf("hits = %+v", hits)
	}
	last := srv.Requests()[3].Messages
	if m := last[len(last)-1]; m.Role != "tool" || !strings.Contains(m.Content, "stop reading a") {
		t.Errorf("the model was told %+v, want the refusal", m)
	}
	if ev := rec.kinds(EventRepeat); len(ev) != 1 || ev[0].Tool != "read" {
		t.Errorf("repeat events = %+v", ev)
	}
}

// With no host to ask, a hit stops the loop with a RepeatError and every
// call of that response is answered.
func TestRepeatStopsWithoutHost(t *testing.T) {
	srv := startServer(t)
	loopingModel(srv, "read", `{"text":"a"}`, 4)
	rec := &recorder{}
	l := newLoop(srv, rec, echoTool("read"))
	l.Repeats = &loopguard.Guard{Limit: 3}
	_, err := l.Run(ctxT(t), "go")
	var re *RepeatError
	if !errors.As(err, &re) || re.Hit.Times != 2 {
		t.Fatalf("err = %v, want a RepeatError after 2", err)
	}
	h := l.History()
	if m := h[len(h)-1]; m.Role != "tool" || !strings.HasPrefix(m.Content, "error: not run: loop: read called 2 times") {
		t.Errorf("last message %+v", m)
	}
}

// Allowed ("" from the host), the call runs and the count starts again; a
// call whose result changes is never a hit.
func TestRepeatAllowedAndProgress(t *testing.T) {
	srv := startServer(t)
	loopingModel(srv, "read", `{"text":"a"}`, 4)
	rec := &recorder{}
	l := newLoop(srv, rec, echoTool("read"))
	l.Repeats = &loopguard.Guard{Limit: 3}
	asked := 0
	l.OnRepeat = func(ctx context.Context, h loopguard.Hit) (string, error) { asked++; return "", nil }
	if _, err := l.Run(ctxT(t), "go"); err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Errorf("asked %d times, want 1 (the 3rd call; the 4th is the 2nd of a new row)", asked)
	}

	srv2 := startServer(t)
	loopingModel(srv2, "tick", `{}`, 5)
	n := 0
	tick := Tool{Name: "tick", Call: func(ctx context.Context, args json.RawMessage) (string, error) {
		n++
		return strings.Repeat("x", n), nil
	}}
	l2 := newLoop(srv2, &recorder{}, tick)
	l2.Repeats = &loopguard.Guard{Limit: 3}
	if _, err := l2.Run(ctxT(t), "go"); err != nil {
		t.Fatalf("a call whose result changes was stopped: %v", err)
	}
}
