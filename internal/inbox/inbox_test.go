package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launcher spawns /bin/true as the "host": the callee's requests are served
// in-process by the test, and Start never runs a real agent.
func launcher(s *store.Store) *agent.Launcher {
	return &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/bin/true"}
}

func messages(t *testing.T, s *store.Store, name string) []inbox.Message {
	t.Helper()
	ms, err := jsonl.ReadAll[inbox.Message](s.InboxPath(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// waitFor blocks (file events, not polling) until cond holds for the inbox
// of name, or fails the test after a hang guard.
func waitFor(t *testing.T, s *store.Store, name string, cond func([]inbox.Message) bool) []inbox.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var ms []inbox.Message
	_ = os.MkdirAll(s.AgentDir(name), 0o755)
	err := watch.Until(ctx, func() []string { return []string{s.AgentDir(name)} }, func() (bool, error) {
		var err error
		ms, err = jsonl.ReadAll[inbox.Message](s.InboxPath(name), nil)
		return err == nil && cond(ms), nil
	})
	if err != nil {
		t.Fatalf("waiting on %s's inbox: %v; have %+v", name, err, ms)
	}
	return ms
}

func TestSendAppendsAndEmits(t *testing.T) {
	s := newStore(t)
	m, err := inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindNotice, From: "human", To: "reader", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.ID, "msg-") || m.Time.IsZero() {
		t.Fatalf("id %q time %v", m.ID, m.Time)
	}
	got := messages(t, s, "reader")
	if len(got) != 1 || got[0].Text != "hello" || got[0].ID != m.ID {
		t.Fatalf("inbox %+v", got)
	}
	evs, err := jsonl.ReadAll[bus.Event](s.EventsPath(), nil)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Kind != "po.notice" || last.Text != "human → reader: hello" || last.MsgID != m.ID {
		t.Fatalf("event %+v", last)
	}
	if _, err := inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindReply, From: "reader", To: "human", Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	evs, _ = jsonl.ReadAll[bus.Event](s.EventsPath(), nil)
	if got := evs[len(evs)-1].Text; got != "reader → human: error: boom" {
		t.Fatalf("a failed reply is shown as the error: %q", got)
	}
}

func TestFormat(t *testing.T) {
	if got := inbox.Format(inbox.Message{From: "human", Text: "  hi\n"}); got != "Message from the human:\nhi" {
		t.Fatal(got)
	}
	if got := inbox.Format(inbox.Message{From: "coordinator", Text: "list"}); got != "Message from @coordinator:\nlist" {
		t.Fatal(got)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		text, from, body string
		ok               bool
	}{
		{inbox.Format(inbox.Message{From: "human", Text: "hi\nthere"}), "human", "hi\nthere", true},
		{inbox.Format(inbox.Message{From: "coordinator", Text: "list"}), "coordinator", "list", true},
		{"New in the room:\n@a: b", "", "", false},
		{"Message from @:\nx", "", "", false},
		{"Message from the human:", "", "", false},
	} {
		from, body, ok := inbox.Parse(tc.text)
		if from != tc.from || body != tc.body || ok != tc.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", tc.text, from, body, ok, tc.from, tc.body, tc.ok)
		}
	}
}

// Resident creates the object's record once, even with many callers at once.
func TestResidentOnce(t *testing.T) {
	s := newStore(t)
	set, err := prompt.LoadProject(s, fsstate.New(s))
	if err != nil {
		t.Fatal(err)
	}
	po := set["greeter"]
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			a, err := inbox.Resident(s, fsstate.New(s), po, "llm")
			if err != nil || a.Name != "greeter" {
				t.Errorf("Resident = %+v, %v", a, err)
			}
		})
	}
	wg.Wait()
	a, err := s.Agent("greeter")
	if err != nil {
		t.Fatal(err)
	}
	if a.Prompt != "greeter" || a.Runtime != "llm" || a.Status != store.AgentPending || a.TaskID != "" {
		t.Fatalf("record %+v", a)
	}
}

// Serve answers requests one at a time, in order; a handler error becomes the
// reply's Error; notices go to the notice callback.
func TestServeAnswersInOrder(t *testing.T) {
	s := newStore(t)
	for i, text := range []string{"one", "two", "fail"} {
		if _, err := inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindRequest, From: "human", To: "reader", Corr: "rq-00000" + string(rune('1'+i)), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindNotice, From: "human", To: "reader", Text: "fyi"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var notices []string
	done := make(chan error, 1)
	go func() {
		done <- inbox.Serve(ctx, s, fsstate.New(s), "reader", func(ctx context.Context, m inbox.Message) (string, error) {
			if bus.CauseOf(ctx) != m.Corr { // what the handler does nests under the request
				return "", fmt.Errorf("cause %q, want %q", bus.CauseOf(ctx), m.Corr)
			}
			if m.Text == "fail" {
				return "", errors.New("cannot")
			}
			return "re: " + m.Text, nil
		}, func(m inbox.Message) { notices = append(notices, m.Text) })
	}()
	got := waitFor(t, s, "human", func(ms []inbox.Message) bool { return len(ms) == 3 })
	cancel()
	<-done
	for i, want := range []struct{ corr, text, err string }{{"rq-000001", "re: one", ""}, {"rq-000002", "re: two", ""}, {"rq-000003", "", "cannot"}} {
		if m := got[i]; m.Kind != inbox.KindReply || m.From != "reader" || m.Corr != want.corr || m.Text != want.text || m.Error != want.err {
			t.Errorf("reply %d = %+v, want %+v", i, m, want)
		}
	}
	if len(notices) != 1 || notices[0] != "fyi" {
		t.Fatalf("notices %v", notices)
	}
}

// A restarted Serve resumes after the last request it answered: nothing is
// lost, nothing answered twice.
func TestServeResumesAfterRestart(t *testing.T) {
	s := newStore(t)
	var mu sync.Mutex
	var seen []string
	handle := func(_ context.Context, m inbox.Message) (string, error) {
		mu.Lock()
		seen = append(seen, m.Text)
		mu.Unlock()
		return "ok " + m.Text, nil
	}
	serve := func() (cancel func()) {
		ctx, cancelCtx := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = inbox.Serve(ctx, s, fsstate.New(s), "reader", handle, nil)
		}()
		return func() { cancelCtx(); <-done }
	}
	send := func(corr, text string) {
		if _, err := inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindRequest, From: "human", To: "reader", Corr: corr, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	send("rq-00000a", "a")
	stop := serve()
	waitFor(t, s, "human", func(ms []inbox.Message) bool { return len(ms) == 1 })
	stop()
	send("rq-00000b", "b") // arrives while nobody serves
	stop = serve()
	got := waitFor(t, s, "human", func(ms []inbox.Message) bool { return len(ms) == 2 })
	stop()
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "a,b" || got[1].Corr != "rq-00000b" {
		t.Fatalf("handled %v, replies %+v", seen, got)
	}
}

// Call sends a request, starts the callee, streams its deltas and returns the
// reply that carries its correlation id (not another one).
func TestCallRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mkdir(t, s, "greeter") // Serve runs in an existing agent's host
	go func() {
		_ = inbox.Serve(ctx, s, fsstate.New(s), "greeter", func(_ context.Context, m inbox.Message) (string, error) {
			// A stray reply for someone else's request first: Call must ignore it.
			_, _ = inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindReply, From: "greeter", To: m.From, Corr: "rq-ffffff", Text: "not yours"})
			_ = inbox.Stream(fsstate.New(s), "greeter", m.Corr, "Hel")
			_ = inbox.Stream(fsstate.New(s), "greeter", m.Corr, "lo")
			return "Hello, " + strings.TrimPrefix(m.Text, "I am "), nil
		}, nil)
	}()
	var streamed strings.Builder
	reply, err := inbox.Call(ctx, s, launcher(s), "human", "greeter", "I am Ada", func(d string) { streamed.WriteString(d) })
	if err != nil {
		t.Fatal(err)
	}
	if reply != "Hello, Ada" || streamed.String() != "Hello" {
		t.Fatalf("reply %q streamed %q", reply, streamed.String())
	}
	a, err := s.Agent("greeter")
	if err != nil {
		t.Fatal(err)
	}
	if a.Pid == 0 || a.Runtime != "llm" {
		t.Fatalf("the callee was not started: %+v", a)
	}
	req := messages(t, s, "greeter")[0]
	if req.Kind != inbox.KindRequest || req.From != "human" || !strings.HasPrefix(req.Corr, "rq-") {
		t.Fatalf("request %+v", req)
	}
}

func TestCallErrors(t *testing.T) {
	s := newStore(t)
	l := launcher(s)
	ctx := context.Background()
	if _, err := inbox.Call(ctx, s, l, "human", "nobody", "hi", nil); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("unknown object: %v", err)
	}
	if _, err := inbox.Call(ctx, s, l, "greeter", "greeter", "hi", nil); errs.CodeOf(err) != errs.Usage {
		t.Fatalf("calling itself: %v", err)
	}

	// The callee's handler fails: the reply's error comes back.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mkdir(t, s, "reader")
	go func() {
		_ = inbox.Serve(sctx, s, fsstate.New(s), "reader", func(context.Context, inbox.Message) (string, error) {
			return "", errors.New("model unreachable")
		}, nil)
	}()
	if _, err := inbox.Call(ctx, s, l, "human", "reader", "hi", nil); err == nil || !strings.Contains(err.Error(), "@reader failed: model unreachable") {
		t.Fatalf("failed callee: %v", err)
	}
}

// A callee whose process ends without replying (failed) does not leave the
// caller hanging: Call returns its recorded reason.
func TestCallCalleeGone(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mkdir(t, s, "greeter")
	go func() {
		// Once its host was started, the callee "dies" without replying.
		_ = watch.Until(ctx, func() []string { return []string{s.AgentDir("greeter")} }, func() (bool, error) {
			a, err := s.Agent("greeter")
			return err == nil && a.Status == store.AgentRunning && a.Pid != 0, nil
		})
		_, _ = s.UpdateAgent("greeter", func(a *store.Agent) error {
			a.Status, a.Reason = store.AgentFailed, "no model provider configured"
			return nil
		})
	}()
	_, err := inbox.Call(ctx, s, launcher(s), "human", "greeter", "hi", nil)
	if err == nil || !strings.Contains(err.Error(), "@greeter ended without replying (failed: no model provider configured)") {
		t.Fatalf("Call = %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Call waited for the hang guard")
	}
}

func mkdir(t *testing.T, s *store.Store, name string) {
	t.Helper()
	if err := os.MkdirAll(s.AgentDir(name), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A recipient name becomes a path under agents/: one that is not an agent
// name is refused before anything is written.
func TestSendRefusesBadRecipient(t *testing.T) {
	s := newStore(t)
	for _, to := range []string{"", "../x", "a/b", "..", "Reader"} {
		if _, err := inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindNotice, From: "human", To: to, Text: "hi"}); errs.CodeOf(err) != errs.Usage {
			t.Errorf("Send to %q: %v; want exit 2", to, err)
		}
	}
	if _, err := os.Stat(s.AgentsDir()); err == nil {
		if ents, _ := os.ReadDir(s.AgentsDir()); len(ents) != 0 {
			t.Fatalf("agents/ holds %d entries after refusals", len(ents))
		}
	}
}
