package stateopen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/state/hubproject"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/state/transcript"
)

// A running llm loop whose transcript is on a hub is kept to the bound
// the hub keeps the transcript to (limits.transcript_bytes), by the hub's
// cut: many steps of tool calls through the OpenAI test server (which
// refuses a tool result without its call), each request at most the bound
// and a step, and after every append the loop holds exactly what the
// hub's transcript keeps (the hub counts an entry as the loop does, its
// JSON), so a run resuming it on any machine goes on with the same
// conversation.
func TestRunningLoopKeptOnTheHub(t *testing.T) {
	const bound = 16 << 10
	h := hubtest.Single(t)
	ctx := context.Background()
	if err := hubproject.New(ctx, h.Connect(0), "web-00001e", "host", "/src/web", time.Now()); err != nil {
		t.Fatal(err)
	}
	s := machine(t, config.Store{URL: h.URL(0), Project: "web-00001e"})
	s.Config().Limits.TranscriptBytes = bound
	st, err := stateopen.Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tr := transcript.Of(st, "oak_0001")

	srv := openaitest.New()
	t.Cleanup(srv.Close)
	pad := strings.Repeat("p", 500)
	cuts := 0
	l := &llm.Loop{
		Provider: llm.Provider{BaseURL: srv.BaseURL(), Model: "test-model"},
		Tools: []llm.Tool{{Name: "think", Parameters: json.RawMessage(`{"type":"object"}`),
			Call: func(ctx context.Context, args json.RawMessage) (string, error) { return "noted " + pad, nil }}},
		System: "You are a test agent.", Transcript: tr, HistoryBytes: bound,
		OnEvent: func(ev llm.Event) {
			if ev.Kind == llm.EventCut {
				cuts++
			}
		},
	}
	for i := range 40 {
		srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "think", Arguments: fmt.Sprintf(`{"thought":"%d %s"}`, i, pad)}}})
	}
	srv.Enqueue(openaitest.Reply{Content: "done"})
	if _, err := l.Run(ctx, "think a lot"); err != nil {
		t.Fatal(err)
	}
	for i, r := range srv.Requests() {
		n := 0
		for _, m := range r.Messages[1:] {
			b, _ := json.Marshal(m)
			n += len(b)
		}
		if n > bound+2<<10 || r.Messages[1].Role != "user" {
			t.Fatalf("request %d sends %d bytes of conversation, opening with a %s message", i, n, r.Messages[1].Role)
		}
	}
	kept, err := tr.Load()
	if err != nil {
		t.Fatal(err)
	}
	if held := l.History(); cuts < 2 || !reflect.DeepEqual(held, kept) {
		t.Fatalf("%d cuts; the loop holds %d messages, the hub's transcript %d", cuts, len(held), len(kept))
	}
}
