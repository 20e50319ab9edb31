package stateopen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/hubproject"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
)

// twoMachines are two state directories joined to one new hub project,
// each with its state opened.
func twoMachines(t testing.TB, project string) (a, b *store.Store, sta, stb state.State) {
	t.Helper()
	h := hubtest.Single(t)
	ctx := context.Background()
	if err := hubproject.New(ctx, h.Connect(0), project, "host", "/src/web", time.Now()); err != nil {
		t.Fatal(err)
	}
	sc := config.Store{URL: h.URL(0), Project: project}
	a, b = machine(t, sc), machine(t, sc)
	for _, m := range []struct {
		s  *store.Store
		st *state.State
	}{{a, &sta}, {b, &stb}} {
		opened, err := stateopen.Open(ctx, m.s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { opened.Close() })
		*m.st = opened
	}
	return a, b, sta, stb
}

// An llm agent's transcript written on one machine is the other's: it
// resumes there with the whole conversation, and its tail reads there,
// with nothing in either machine's files.
func TestTranscriptAcrossMachines(t *testing.T) {
	a, b, sta, stb := twoMachines(t, "web-00001a")
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "hello, I am Ada"}, {Role: "assistant", Content: "Hello Ada!"}}
	if err := transcript.Of(sta, "greeter").Append(msgs...); err != nil {
		t.Fatal(err)
	}
	tr := transcript.Of(stb, "greeter")
	if started, err := tr.Started(); err != nil || !started {
		t.Fatalf("b sees no transcript: %v, %v", started, err)
	}
	got, err := tr.Load()
	if err != nil || len(got) != 2 || got[1].Content != "Hello Ada!" {
		t.Fatalf("b loads %+v, %v", got, err)
	}
	last, total, err := tr.Last(1)
	if err != nil || total != 2 || len(last) != 1 || last[0].Content != "Hello Ada!" {
		t.Fatalf("b's last = %+v of %d, %v", last, total, err)
	}
	for _, s := range []*store.Store{a, b} {
		if s.AgentDirExists("greeter") {
			t.Fatalf("%s holds the hub project's transcript in its files", s.Root)
		}
	}
}

// A resident served on machine a streams its reply to a caller on machine
// b piece by piece: each piece reaches the caller before the next is
// written (the callee waits for it), so a reply that came whole at the end
// would hang here, not pass.
func TestStreamedReplyAcrossMachines(t *testing.T) {
	a, b, sta, stb := twoMachines(t, "web-00001b")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The resident runs on a (its host is not this test's concern: runtime
	// none keeps the caller from starting one on b).
	if _, err := sta.CreateAgent(&state.Agent{Name: "greeter", Prompt: "greeter", Runtime: config.RuntimeNone,
		Status: store.AgentRunning, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	pieces := []string{"Hel", "lo, ", "Ada"}
	arrived := make(chan string, len(pieces))
	served := make(chan error, 1)
	go func() {
		served <- inbox.Serve(ctx, a, sta, "greeter", func(ctx context.Context, m inbox.Message) (string, error) {
			for _, p := range pieces {
				if err := inbox.Stream(sta, "greeter", m.Corr, p); err != nil {
					return "", err
				}
				select {
				case got := <-arrived:
					if got != p {
						t.Errorf("the caller got %q where %q was streamed", got, p)
					}
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			return strings.Join(pieces, ""), nil
		}, nil)
	}()
	l := &agent.Launcher{Store: b, State: stb, Exe: "/bin/true"}
	reply, err := inbox.Call(ctx, b, l, "human", "greeter", "I am Ada", func(d string) { arrived <- d })
	if err != nil || reply != "Hello, Ada" {
		t.Fatalf("the call on b = %q, %v", reply, err)
	}
	cancel()
	<-served
}

// A cost recorded by a host on a is in b's ledger, priced, and counts in
// b's windows.
func TestCostsAcrossMachines(t *testing.T) {
	_, b, sta, stb := twoMachines(t, "web-00001c")
	now := time.Now()
	prices := []cost.Price{{Model: "house-model", Input: 1, Output: 2}}
	if _, err := state.RecordCost(sta, cost.Entry{Agent: "greeter", Runtime: "llm", Model: "house-model", Turns: 1,
		Usage: &cost.Usage{Input: 1_000_000}}, now, prices); err != nil {
		t.Fatal(err)
	}
	got, err := state.PricedCosts(stb, time.Time{}, prices)
	if err != nil || len(got) != 1 || got[0].Agent != "greeter" || got[0].USD == nil || *got[0].USD != 1 {
		t.Fatalf("b's ledger reads %+v, %v", got, err)
	}
	sp := state.Spent(stb, nil, &state.Agent{Name: "other"}, b.Now, prices, func() float64 { return 0 })
	if usd := sp.Window(time.Hour); usd != 1 {
		t.Fatalf("b's last hour = $%v, want $1", usd)
	}
}

// limitedMachine is a state directory whose config.json holds cfg (a
// store section, a limit), with its state opened.
func limitedMachine(t *testing.T, cfg map[string]any) state.State {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := stateopen.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// limits.log_entry_bytes bounds one transcript entry on files and on a hub
// alike: a tool result longer than it is kept cut, ending with pm's mark
// (how much was cut, the limit, the key), the entry within the limit.
func TestLogEntryLimitFromConfig(t *testing.T) {
	const limit = 4096
	h := hubtest.Single(t)
	if err := hubproject.New(context.Background(), h.Connect(0), "web-00001c", "host", "/src/web", time.Now()); err != nil {
		t.Fatal(err)
	}
	limits := map[string]any{"log_entry_bytes": limit}
	for name, cfg := range map[string]map[string]any{
		"files": {"limits": limits},
		"hub":   {"limits": limits, "store": config.Store{URL: h.URL(0), Project: "web-00001c"}},
	} {
		st := limitedMachine(t, cfg)
		long := strings.Repeat("0123456789", 1000)
		tr := transcript.Of(st, "reader")
		if err := tr.Append(openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_1", Content: long}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := st.ReadTranscript("reader", 0, func(raw json.RawMessage, _ int64) error {
			if len(raw) > limit {
				t.Errorf("%s: an entry of %d bytes, over the %d limit", name, len(raw), limit)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := tr.Load()
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: load %d messages, %v", name, len(got), err)
		}
		m := got[0]
		if m.Role != "tool" || m.ToolCallID != "call_1" || !strings.HasPrefix(m.Content, long[:1000]) ||
			!strings.HasSuffix(m.Content, fmt.Sprintf("one log entry is at most %d bytes (limits.log_entry_bytes)]", limit)) {
			t.Fatalf("%s: the cut message: role %q call %q, ends %q", name, m.Role, m.ToolCallID, m.Content[max(0, len(m.Content)-120):])
		}
	}
}

// limits.transcript_bytes in a machine's config.json is the total its pm
// keeps an agent's transcript to, on the files and on the hub alike.
func TestTranscriptBoundFromConfig(t *testing.T) {
	const bound = config.MinLogBytes
	h := hubtest.Single(t)
	if err := hubproject.New(context.Background(), h.Connect(0), "web-00001d", "host", "/src/web", time.Now()); err != nil {
		t.Fatal(err)
	}
	limits := map[string]any{"transcript_bytes": bound}
	for name, cfg := range map[string]map[string]any{
		"files": {"limits": limits},
		"hub":   {"limits": limits, "store": config.Store{URL: h.URL(0), Project: "web-00001d"}},
	} {
		st := limitedMachine(t, cfg)
		tr := transcript.Of(st, "reader")
		long := strings.Repeat("0123456789", 50_000)
		for i := range 12 { // 6 MB
			if err := tr.Append(openai.ChatCompletionMessage{Role: "user", Content: fmt.Sprint(i, long)}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		got, err := tr.Load()
		if err != nil || len(got) < 2 {
			t.Fatalf("%s: load %d messages, %v", name, len(got), err)
		}
		if want := fmt.Sprintf("a transcript is kept to at most %d bytes (limits.transcript_bytes)", bound); !strings.Contains(got[0].Content, want) {
			t.Fatalf("%s: the first message %.200q, want the mark saying %q", name, got[0].Content, want)
		}
		var size int
		for _, m := range got[1:] {
			size += len(m.Content)
		}
		if size > bound || !strings.HasPrefix(got[len(got)-1].Content, "11") {
			t.Fatalf("%s: %d bytes of content kept (bound %d), last %.10q", name, size, bound, got[len(got)-1].Content)
		}
	}
}
