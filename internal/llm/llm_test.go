package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/secret"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
)

const testKey = "sk-test-SECRET-0123456789abcdef"

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func startServer(t *testing.T) *openaitest.Server {
	t.Helper()
	srv := openaitest.New(openaitest.WithAPIKey(testKey))
	t.Cleanup(srv.Close)
	return srv
}

// recorder collects what a Loop reports; it is the Loop's Sleep, OnDelta
// and OnEvent.
type recorder struct {
	mu     sync.Mutex
	sleeps []time.Duration
	deltas []string
	events []Event
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sleeps = append(r.sleeps, d)
	return ctx.Err()
}

func (r *recorder) delta(s string) { r.mu.Lock(); r.deltas = append(r.deltas, s); r.mu.Unlock() }
func (r *recorder) event(e Event)  { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recorder) kinds(k EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func newLoop(srv *openaitest.Server, rec *recorder, tools ...Tool) *Loop {
	return &Loop{
		Provider: Provider{BaseURL: srv.BaseURL(), APIKey: testKey, Model: "test-model"},
		Tools:    tools,
		System:   "You are a test agent.",
		OnDelta:  rec.delta,
		OnEvent:  rec.event,
		Sleep:    rec.sleep,
	}
}

func echoTool(name string) Tool {
	return Tool{
		Name:        name,
		Description: "echoes its arguments",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			return name + ":" + string(args), nil
		},
	}
}

func TestPlainReplyStreamed(t *testing.T) {
	srv := startServer(t)
	const answer = "Hello there, I am streamed word by word."
	srv.Enqueue(openaitest.Reply{Content: answer})
	rec := &recorder{}
	l := newLoop(srv, rec)
	got, err := l.Run(ctxT(t), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if got != answer {
		t.Errorf("answer = %q, want %q", got, answer)
	}
	if len(rec.deltas) < 2 || strings.Join(rec.deltas, "") != answer {
		t.Errorf("deltas = %q, want several pieces joining to the answer", rec.deltas)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if !r.Stream || !r.IncludeUsage || r.Model != "test-model" {
		t.Errorf("request stream=%v include_usage=%v model=%q", r.Stream, r.IncludeUsage, r.Model)
	}
	wantRoles := []string{"system", "user"}
	if roles := roles(r.Messages); !reflect.DeepEqual(roles, wantRoles) {
		t.Errorf("roles = %v, want %v", roles, wantRoles)
	}
	if l.Used.Turns != 1 || l.Used.Tokens == 0 {
		t.Errorf("used = %+v, want 1 turn and some tokens", l.Used)
	}
}

func roles(msgs []openaitest.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role)
	}
	return out
}

func TestParallelToolCalls(t *testing.T) {
	srv := startServer(t)
	calls := []openaitest.ToolCall{
		{ID: "call_a", Name: "alpha", Arguments: `{"text":"the first argument is long enough to be fragmented"}`},
		{ID: "call_b", Name: "beta", Arguments: `{"text":"and so is the second one, in several deltas"}`},
	}
	srv.Enqueue(openaitest.Reply{Content: "Let me look.", ToolCalls: calls}, openaitest.Reply{Content: "done"})

	// A barrier both tools must reach before either returns: it only opens
	// if they run concurrently. ToolTimeout turns a sequential loop into a
	// failing result instead of a hang.
	var arrived sync.WaitGroup
	arrived.Add(2)
	open := make(chan struct{})
	go func() { arrived.Wait(); close(open) }()
	var mu sync.Mutex
	gotArgs := map[string]string{}
	barrierTool := func(name string) Tool {
		return Tool{Name: name, Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			mu.Lock()
			gotArgs[name] = string(args)
			mu.Unlock()
			arrived.Done()
			select {
			case <-open:
				return "result of " + name, nil
			case <-ctx.Done():
				return "", errors.New("barrier not reached: tools did not run concurrently")
			}
		}}
	}
	rec := &recorder{}
	l := newLoop(srv, rec, barrierTool("alpha"), barrierTool("beta"))
	l.ToolTimeout = 20 * time.Second
	got, err := l.Run(ctxT(t), "go")
	if err != nil {
		t.Fatal(err)
	}
	if got != "done" {
		t.Errorf("answer = %q", got)
	}
	for _, c := range calls {
		if gotArgs[c.Name] != c.Arguments {
			t.Errorf("%s got arguments %q, want %q", c.Name, gotArgs[c.Name], c.Arguments)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if len(reqs[0].Tools) != 2 || reqs[0].Tools[0].Function.Name != "alpha" {
		t.Errorf("tools sent = %+v", reqs[0].Tools)
	}
	msgs := reqs[1].Messages
	if want := []string{"system", "user", "assistant", "tool", "tool"}; !reflect.DeepEqual(roles(msgs), want) {
		t.Fatalf("follow-up roles = %v, want %v", roles(msgs), want)
	}
	asst := msgs[2]
	if asst.Content != "Let me look." || len(asst.ToolCalls) != 2 {
		t.Errorf("assistant echoed as %+v", asst)
	}
	for i, c := range calls {
		if asst.ToolCalls[i] != c {
			t.Errorf("echoed call %d = %+v, want %+v", i, asst.ToolCalls[i], c)
		}
		tm := msgs[3+i]
		if tm.ToolCallID != c.ID || tm.Content != "result of "+c.Name {
			t.Errorf("tool message %d = %+v, want id %s result of %s", i, tm, c.ID, c.Name)
		}
	}
	if n := len(rec.kinds(EventToolCall)); n != 2 {
		t.Errorf("%d tool_call events, want 2", n)
	}
	if l.Used.ToolCalls != 2 || l.Used.Turns != 2 {
		t.Errorf("used = %+v", l.Used)
	}
}

func TestToolFailuresBecomeResults(t *testing.T) {
	srv := startServer(t)
	srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{
		{ID: "c1", Name: "fails", Arguments: `{}`},
		{ID: "c2", Name: "nosuch", Arguments: `{}`},
		{ID: "c3", Name: "panics"},
		{ID: "c4", Name: "fails", Arguments: `{"broken"`},
		{ID: "c5", Name: "silent"},
	}}, openaitest.Reply{Content: "ok"})
	rec := &recorder{}
	l := newLoop(srv, rec,
		Tool{Name: "fails", Call: func(context.Context, json.RawMessage) (string, error) { return "", errors.New("disk full") }},
		Tool{Name: "panics", Call: func(context.Context, json.RawMessage) (string, error) { panic("boom") }},
		Tool{Name: "silent", Call: func(context.Context, json.RawMessage) (string, error) { return "", nil }},
	)
	if _, err := l.Run(ctxT(t), "go"); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[1].Messages[3:]
	want := []string{"error: disk full", `error: unknown tool "nosuch"`, "error: tool panics panicked: boom", "error: the arguments are not valid JSON", "(no output)"}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i].Content, w) {
			t.Errorf("result %d = %q, want prefix %q", i, msgs[i].Content, w)
		}
	}
}

// cutTransport ends the body of the first streamed response cleanly after a
// few bytes, as a proxy dropping the connection would: no finish_reason, no [DONE].
type cutTransport struct {
	mu   sync.Mutex
	cuts int
}

func (c *cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && resp.StatusCode == 200 && c.cuts > 0 {
		c.cuts--
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, 300), resp.Body}
	}
	return resp, err
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		replies    []openaitest.Reply
		attempts   int
		cut        int
		timeout    time.Duration
		wantErr    string // empty: success with answer "ok"
		wantStatus int    // of the returned error
		wantReqs   int
		wantSleeps []time.Duration // nil: only the count matters
		nSleeps    int
	}{
		{
			name:       "429 honours Retry-After",
			replies:    []openaitest.Reply{{Status: 429, RetryAfter: 7 * time.Second}, {Content: "ok"}},
			wantReqs:   2,
			wantSleeps: []time.Duration{7 * time.Second},
			nSleeps:    1,
		},
		{
			name:     "503 then success",
			replies:  []openaitest.Reply{{Status: 503}, {Content: "ok"}},
			wantReqs: 2,
			nSleeps:  1,
		},
		{
			name:       "500 until attempts run out",
			replies:    []openaitest.Reply{{Status: 500}, {Status: 500}, {Status: 500}, {Content: "never"}},
			attempts:   3,
			wantErr:    "model call failed after 3 attempt(s)",
			wantStatus: 500,
			wantReqs:   3,
			nSleeps:    2,
		},
		{
			name:       "400 fails fast",
			replies:    []openaitest.Reply{{Status: 400, ErrorMessage: "bad request"}, {Content: "never"}},
			wantErr:    "model call failed after 1 attempt(s)",
			wantStatus: 400,
			wantReqs:   1,
		},
		{
			name:     "truncated stream is retried",
			replies:  []openaitest.Reply{{Content: "a reply long enough to be cut before its finish reason arrives"}, {Content: "ok"}},
			cut:      1,
			wantReqs: 2,
			nSleeps:  1,
		},
		{
			name:     "call timeout is retried",
			replies:  []openaitest.Reply{{Delay: time.Hour}, {Content: "ok"}},
			timeout:  100 * time.Millisecond,
			wantReqs: 2,
			nSleeps:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			srv.Enqueue(tt.replies...)
			rec := &recorder{}
			l := newLoop(srv, rec)
			l.Retry = RetryPolicy{MaxAttempts: tt.attempts, BaseDelay: time.Second, MaxDelay: 30 * time.Second}
			l.CallTimeout = tt.timeout
			if tt.cut > 0 {
				l.Provider.HTTPClient = &http.Client{Transport: &cutTransport{cuts: tt.cut}}
			}
			got, err := l.Run(ctxT(t), "hi")
			if tt.wantErr == "" {
				if err != nil || got != "ok" {
					t.Fatalf("Run = %q, %v; want ok", got, err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var apiErr *openai.APIError
				if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tt.wantStatus {
					t.Errorf("err %v does not unwrap to an APIError with status %d", err, tt.wantStatus)
				}
			}
			if n := len(srv.Requests()); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			if len(rec.sleeps) != tt.nSleeps {
				t.Errorf("sleeps = %v, want %d", rec.sleeps, tt.nSleeps)
			}
			if tt.wantSleeps != nil && !reflect.DeepEqual(rec.sleeps, tt.wantSleeps) {
				t.Errorf("sleeps = %v, want %v", rec.sleeps, tt.wantSleeps)
			}
			for i, d := range rec.sleeps {
				if d <= 0 || d > 30*time.Second {
					t.Errorf("sleep %d = %v, outside (0, MaxDelay]", i, d)
				}
			}
			if n := len(rec.kinds(EventRetry)); n != tt.nSleeps {
				t.Errorf("%d retry events, want %d", n, tt.nSleeps)
			}
		})
	}
}

func TestBackoffGrows(t *testing.T) {
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: 10 * time.Second}.withDefaults()
	for attempt, hi := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 10: 10 * time.Second} {
		for range 50 {
			if d := p.backoff(attempt, nil); d < hi/2 || d > hi {
				t.Fatalf("attempt %d: backoff %v outside [%v, %v]", attempt, d, hi/2, hi)
			}
		}
	}
	info := &respInfo{header: http.Header{"Retry-After": {"120"}}}
	if d := p.backoff(1, info); d != 10*time.Second {
		t.Errorf("Retry-After 120 capped to %v, want MaxDelay", d)
	}
}

func TestBudgets(t *testing.T) {
	call := func(id string) openaitest.ToolCall {
		return openaitest.ToolCall{ID: id, Name: "echo", Arguments: `{"text":"x"}`}
	}
	tests := []struct {
		name      string
		budget    Budget
		replies   []openaitest.Reply
		advance   time.Duration // clock step per tool call
		wantWhat  string
		wantReqs  int
		wantTools int64
	}{
		{
			name:     "turns",
			budget:   Budget{MaxTurns: 2},
			replies:  []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{call("c1")}}, {ToolCalls: []openaitest.ToolCall{call("c2")}}, {Content: "never"}},
			wantWhat: BudgetTurns, wantReqs: 2, wantTools: 2,
		},
		{
			name:     "tool calls",
			budget:   Budget{MaxToolCalls: 2},
			replies:  []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{call("c1")}}, {ToolCalls: []openaitest.ToolCall{call("c2"), call("c3")}}, {Content: "never"}},
			wantWhat: BudgetToolCalls, wantReqs: 2, wantTools: 1,
		},
		{
			name:   "tokens",
			budget: Budget{MaxTokens: 1000},
			replies: []openaitest.Reply{
				{ToolCalls: []openaitest.ToolCall{call("c1")}, Usage: &openaitest.Usage{PromptTokens: 400, CompletionTokens: 200}},
				{ToolCalls: []openaitest.ToolCall{call("c2")}, Usage: &openaitest.Usage{PromptTokens: 700, CompletionTokens: 100}},
				{Content: "never"},
			},
			wantWhat: BudgetTokens, wantReqs: 2, wantTools: 1,
		},
		{
			name:     "wall time",
			budget:   Budget{MaxWall: time.Minute},
			replies:  []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{call("c1")}}, {Content: "never"}},
			advance:  2 * time.Minute,
			wantWhat: BudgetWall, wantReqs: 1, wantTools: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			srv.Enqueue(tt.replies...)
			var mu sync.Mutex
			clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			tool := echoTool("echo")
			inner := tool.Call
			tool.Call = func(ctx context.Context, args json.RawMessage) (string, error) {
				mu.Lock()
				clock = clock.Add(tt.advance)
				mu.Unlock()
				return inner(ctx, args)
			}
			rec := &recorder{}
			tr, _ := fileTranscript(t)
			l := newLoop(srv, rec, tool)
			l.Transcript = tr
			l.Budget = tt.budget
			l.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			_, err := l.Run(ctxT(t), "go")
			var be *BudgetError
			if !errors.As(err, &be) || be.What != tt.wantWhat {
				t.Fatalf("err = %v, want a %s BudgetError", err, tt.wantWhat)
			}
			if n := len(srv.Requests()); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			if l.Used.ToolCalls != tt.wantTools {
				t.Errorf("ran %d tool calls, want %d", l.Used.ToolCalls, tt.wantTools)
			}
			if len(rec.kinds(EventBudget)) != 1 {
				t.Errorf("budget events = %v", rec.kinds(EventBudget))
			}
			// The stop left a valid transcript: a new loop with room resumes
			// it (the server validates the tool-call pairing).
			srv.Handle(func(openaitest.Request) openaitest.Reply { return openaitest.Reply{Content: "resumed"} })
			l2 := newLoop(srv, &recorder{}, echoTool("echo"))
			l2.Transcript = tr
			if got, err := l2.Run(ctxT(t), ""); err != nil || got != "resumed" {
				t.Fatalf("resume = %q, %v", got, err)
			}
		})
	}
}

func TestTranscriptResume(t *testing.T) {
	srv := startServer(t)
	tr, _ := fileTranscript(t)
	srv.Enqueue(openaitest.Reply{Content: "first answer"}, openaitest.Reply{Content: "second answer"})

	l1 := newLoop(srv, &recorder{})
	l1.Transcript = tr
	if _, err := l1.Run(ctxT(t), "first question"); err != nil {
		t.Fatal(err)
	}
	l2 := newLoop(srv, &recorder{})
	l2.Transcript = tr
	if got, err := l2.Run(ctxT(t), "second question"); err != nil || got != "second answer" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	msgs := srv.Requests()[1].Messages
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Role+":"+m.Content)
	}
	want := []string{"system:You are a test agent.", "user:first question", "assistant:first answer", "user:second question"}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("resumed request = %q, want %q", texts, want)
	}
}

// TestResumeAfterKill replays what kill -9 leaves: an assistant turn whose
// tool calls were never answered (one was), and a torn last line.
func TestResumeAfterKill(t *testing.T) {
	srv := startServer(t)
	tr, path := fileTranscript(t)
	err := tr.Append(
		openai.ChatCompletionMessage{Role: "user", Content: "do two things"},
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "echo", Arguments: "{}"}},
			{ID: "c2", Type: "function", Function: openai.FunctionCall{Name: "echo", Arguments: "{}"}},
		}},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "c1", Content: "one done"},
	)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"role":"tool","tool_call_id":"c2","cont`) // torn by the kill
	f.Close()

	srv.Enqueue(openaitest.Reply{Content: "carrying on"})
	rec := &recorder{}
	l := newLoop(srv, rec, echoTool("echo"))
	l.Transcript = tr
	if got, err := l.Run(ctxT(t), ""); err != nil || got != "carrying on" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	msgs := srv.Requests()[0].Messages
	if want := []string{"system", "user", "assistant", "tool", "tool"}; !reflect.DeepEqual(roles(msgs), want) {
		t.Fatalf("roles = %v, want %v", roles(msgs), want)
	}
	if msgs[4].ToolCallID != "c2" || !strings.HasPrefix(msgs[4].Content, "error: interrupted") {
		t.Errorf("unanswered call resumed as %+v", msgs[4])
	}
	if len(rec.kinds(EventRepair)) != 1 {
		t.Errorf("repair events = %v", rec.kinds(EventRepair))
	}
	// The repair was persisted: the file now loads as a valid conversation.
	loaded, err := tr.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, tail, changed := repair(loaded); changed || len(tail) != 0 {
		t.Errorf("transcript still needs repair after resume: %+v", loaded)
	}
	if len(loaded) != 5 || loaded[4].Content != "carrying on" {
		t.Errorf("transcript = %+v", loaded)
	}
}

func TestRepair(t *testing.T) {
	asst := func(ids ...string) openai.ChatCompletionMessage {
		m := openai.ChatCompletionMessage{Role: "assistant"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: id, Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: "{}"}})
		}
		return m
	}
	tool := func(id string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: "r"}
	}
	user := openai.ChatCompletionMessage{Role: "user", Content: "u"}
	tests := []struct {
		name        string
		in          []openai.ChatCompletionMessage
		wantIDs     string // role[:id] of the result
		wantTail    int
		wantChanged bool
	}{
		{"valid", []openai.ChatCompletionMessage{user, asst("a"), tool("a")}, "user assistant tool:a", 0, false},
		{"tail", []openai.ChatCompletionMessage{user, asst("a", "b"), tool("b")}, "user assistant tool:b tool:a", 1, true},
		{"inside", []openai.ChatCompletionMessage{user, asst("a"), user}, "user assistant tool:a user", 0, true},
		{"orphan", []openai.ChatCompletionMessage{user, tool("x"), asst()}, "user assistant", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixed, tail, changed := repair(tt.in)
			var got []string
			for _, m := range fixed {
				s := m.Role
				if m.ToolCallID != "" {
					s += ":" + m.ToolCallID
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != tt.wantIDs || len(tail) != tt.wantTail || changed != tt.wantChanged {
				t.Errorf("repair = %v, tail %d, changed %v; want %s, %d, %v", got, len(tail), changed, tt.wantIDs, tt.wantTail, tt.wantChanged)
			}
		})
	}
}

func TestSecretsNeverRecorded(t *testing.T) {
	srv := startServer(t)
	srv.Enqueue(
		openaitest.Reply{Content: "I saw " + testKey, ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "env", Arguments: `{"echo":"` + testKey + `"}`}}},
		openaitest.Reply{Content: "done"},
	)
	tr, path := fileTranscript(t)
	rec := &recorder{}
	var toolArgs string
	l := newLoop(srv, rec, Tool{Name: "env", Call: func(_ context.Context, args json.RawMessage) (string, error) {
		toolArgs = string(args)
		return "OPENAI_API_KEY=" + testKey, nil
	}})
	l.System = "key is " + testKey
	l.Transcript = tr
	if _, err := l.Run(ctxT(t), "my key is "+testKey); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), testKey) || !strings.Contains(string(data), secret.Masked) {
		t.Errorf("transcript holds the key or masks nothing:\n%s", data)
	}
	if s := fmt.Sprintf("%+v", rec.events); strings.Contains(s, testKey) {
		t.Errorf("events hold the key: %s", s)
	}
	// A tool gets masked arguments (what it records cannot hold the key),
	// and the streamed text is masked too.
	if strings.Contains(toolArgs, testKey) || !strings.Contains(toolArgs, secret.Masked) {
		t.Errorf("tool arguments = %s, want the key masked", toolArgs)
	}
	if s := strings.Join(rec.deltas, ""); strings.Contains(s, testKey) || !strings.Contains(s, "I saw "+secret.Masked) {
		t.Errorf("streamed text = %q, want the key masked", s)
	}
	for i, r := range srv.Requests() {
		if strings.Contains(string(r.Body), testKey) {
			t.Errorf("request %d body holds the key", i)
		}
	}
	for _, s := range []string{fmt.Sprint(l.Provider), fmt.Sprintf("%+v", l.Provider), fmt.Sprintf("%#v", l.Provider)} {
		if strings.Contains(s, testKey) {
			t.Errorf("provider prints its key: %s", s)
		}
	}

	// An error the endpoint returns with the key in it comes back masked.
	srv2 := openaitest.New()
	t.Cleanup(srv2.Close)
	srv2.Enqueue(openaitest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: " + testKey})
	l2 := newLoop(srv2, &recorder{})
	_, err = l2.Run(ctxT(t), "hi")
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), secret.Masked) {
		t.Errorf("error = %v, want it failed and masked", err)
	}
}

func TestProviderFromEnv(t *testing.T) {
	tests := []struct {
		name                       string
		env                        map[string]string
		cfgBase, cfgModel, fmModel string
		want                       Provider
		wantErr                    string
	}{
		{name: "nothing", wantErr: NoProviderMessage},
		{name: "model only", env: map[string]string{"PM_MODEL": "m"}, wantErr: NoProviderMessage},
		{
			name: "key and PM_MODEL", env: map[string]string{"OPENAI_API_KEY": "k", "PM_MODEL": "env-model"},
			cfgModel: "cfg-model", want: Provider{APIKey: "k", Model: "env-model"},
		},
		{
			name: "frontmatter wins", env: map[string]string{"OPENAI_API_KEY": "k", "PM_MODEL": "env-model"},
			cfgModel: "cfg-model", fmModel: "fm-model", want: Provider{APIKey: "k", Model: "fm-model"},
		},
		{
			name: "config model last", env: map[string]string{"OPENAI_API_KEY": "k"},
			cfgModel: "cfg-model", want: Provider{APIKey: "k", Model: "cfg-model"},
		},
		{
			name: "key without model", env: map[string]string{"OPENAI_API_KEY": "k"},
			wantErr: "no model configured: set PM_MODEL",
		},
		{
			name: "local base URL needs no key", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1/", "PM_MODEL": "llama3.2"},
			want: Provider{BaseURL: "http://localhost:11434/v1", Model: "llama3.2"},
		},
		{
			name: "env base URL beats config", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"},
			cfgBase: "http://localhost:11434/v1", cfgModel: "m", want: Provider{BaseURL: "http://127.0.0.1:8080/v1", Model: "m"},
		},
		{
			name: "config base URL", cfgBase: "http://localhost:11434/v1", cfgModel: "m",
			want: Provider{BaseURL: "http://localhost:11434/v1", Model: "m"},
		},
		{
			name: "OpenAI base URL needs a key", env: map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1", "PM_MODEL": "m"},
			wantErr: "set OPENAI_API_KEY",
		},
		{
			name: "bad base URL", env: map[string]string{"OPENAI_BASE_URL": "localhost:11434", "PM_MODEL": "m"},
			wantErr: "invalid OPENAI_BASE_URL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			got, err := ProviderFromEnv(getenv, tt.cfgBase, tt.cfgModel, tt.fmModel)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	_, err := ProviderFromEnv(func(string) string { return "" }, "", "", "")
	if err == nil || err.Error() != NoProviderMessage {
		t.Errorf("no-provider error = %v, want exactly %q", err, NoProviderMessage)
	}
}

func TestWallTimeCutsInflightCall(t *testing.T) {
	srv := startServer(t)
	srv.Enqueue(openaitest.Reply{Delay: time.Hour})
	rec := &recorder{}
	l := newLoop(srv, rec)
	l.Budget = Budget{MaxWall: 200 * time.Millisecond}
	_, err := l.Run(ctxT(t), "hi")
	var be *BudgetError
	if !errors.As(err, &be) || be.What != BudgetWall {
		t.Fatalf("err = %v, want a wall time BudgetError", err)
	}
	if len(rec.sleeps) != 0 {
		t.Errorf("retried after the wall budget ran out: %v", rec.sleeps)
	}
}

func TestCallerCancelIsNotRetried(t *testing.T) {
	srv := startServer(t)
	srv.Enqueue(openaitest.Reply{Delay: time.Hour})
	ctx, cancel := context.WithCancel(ctxT(t))
	rec := &recorder{}
	l := newLoop(srv, rec)
	l.OnEvent = func(e Event) {
		if e.Kind == EventTurn {
			cancel()
		}
	}
	_, err := l.Run(ctx, "hi")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(rec.sleeps) != 0 {
		t.Errorf("retried a cancelled call: %v", rec.sleeps)
	}
}

func TestTruncate(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	got := truncate(s, 5)
	if !strings.HasPrefix(got, "éé\n[truncated: 16 more bytes]") {
		t.Errorf("truncate = %q", got)
	}
	if truncate("short", 10) != "short" {
		t.Error("short string changed")
	}
}

func TestEstimateTokensWithoutUsage(t *testing.T) {
	prompt := []openai.ChatCompletionMessage{{Role: "user", Content: strings.Repeat("x", 396)}}
	reply := openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: "abcd", Arguments: strings.Repeat("y", 392)}}}}
	if p, r := estimateTokens(prompt, reply); p != 100 || r != 100 {
		t.Errorf("estimate = %d + %d, want 100 + 100", p, r)
	}
}

// The endpoint's usage is split the way it is priced: cached tokens are a
// part of the prompt's; none reported is an estimate, marked so.
func TestUsageOf(t *testing.T) {
	prompt := []openai.ChatCompletionMessage{{Role: "user", Content: strings.Repeat("x", 396)}}
	reply := openai.ChatCompletionMessage{Role: "assistant", Content: strings.Repeat("y", 396)}
	for _, tc := range []struct {
		name string
		u    *openai.Usage
		want Usage
	}{
		{"none", nil, Usage{Prompt: 100, Completion: 100, Estimated: true}},
		{"zero", &openai.Usage{}, Usage{Prompt: 100, Completion: 100, Estimated: true}},
		{"plain", &openai.Usage{PromptTokens: 120, CompletionTokens: 3, TotalTokens: 123}, Usage{Prompt: 120, Completion: 3}},
		{"cached", &openai.Usage{PromptTokens: 2048, CompletionTokens: 10, TotalTokens: 2058,
			PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1024}}, Usage{Prompt: 2048, Cached: 1024, Completion: 10}},
		{"total only", &openai.Usage{TotalTokens: 50}, Usage{Completion: 50}},
		{"parts over the total", &openai.Usage{PromptTokens: 80, CompletionTokens: 40, TotalTokens: 60,
			PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 70}}, Usage{Prompt: 60, Cached: 60}},
	} {
		if got := usageOf(tc.u, prompt, reply); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// Loop.Before is asked before every model call; a budget it reports stops
// the loop before the call is made, and the usage of each response comes
// split as the endpoint sent it (the cached part of the prompt through the
// real client from prompt_tokens_details).
func TestBeforeStopsTheCall(t *testing.T) {
	srv := startServer(t)
	srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"x"}`}},
			Usage: &openaitest.Usage{PromptTokens: 2048, CachedTokens: 1024, CompletionTokens: 10}},
		openaitest.Reply{Content: "never"},
	)
	rec := &recorder{}
	l := newLoop(srv, rec, echoTool("echo"))
	var asked []Counters
	l.Before = func(ctx context.Context, used Counters) error {
		asked = append(asked, used)
		if used.Turns > 0 {
			return &BudgetError{What: "agent dollars", Key: "budgets.agent.max_usd", LimitUSD: 0.01, UsedUSD: 0.009, Next: 0.002}
		}
		return nil
	}
	_, err := l.Run(ctxT(t), "go")
	var be *BudgetError
	if !errors.As(err, &be) || be.Error() != "budget exceeded: agent dollars $0.0090 + the next call's $0.0020 of $0.0100 (budgets.agent.max_usd)" {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1: the second was refused before it started", n)
	}
	if len(asked) != 2 || asked[1].Turns != 1 || asked[1].Tokens != 2058 {
		t.Errorf("Before saw %+v", asked)
	}
	resp := rec.kinds(EventResponse)
	if len(resp) != 1 || resp[0].Usage != (Usage{Prompt: 2048, Cached: 1024, Completion: 10}) {
		t.Errorf("responses: %+v", resp)
	}
	if b := rec.kinds(EventBudget); len(b) != 1 || !strings.Contains(b[0].Text, "budgets.agent.max_usd") {
		t.Errorf("budget events: %+v", b)
	}
}

func TestUsageBill(t *testing.T) {
	if b := (Usage{Prompt: 100, Completion: 5, Estimated: true}).Bill(); b != nil {
		t.Errorf("an estimate billed: %+v", b)
	}
	if b := (Usage{Prompt: 2048, Cached: 1024, Completion: 10}).Bill(); b == nil || *b != (cost.Usage{Input: 1024, Cached: 1024, Output: 10}) {
		t.Errorf("bill = %+v", b)
	}
}

// The key is read from the variable model.api_key_env names, and from no
// other: not OPENAI_API_KEY when another is named, never GITHUB_TOKEN.
func TestProviderFromEnvKey(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant", "GITHUB_TOKEN": "ghp-x", "PM_MODEL": "m",
		"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	getenv := func(k string) string { return env[k] }
	for keyEnv, want := range map[string]string{"": "sk-openai", "OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant", "MISSING_API_KEY": ""} {
		p, err := ProviderFromEnvKey(getenv, keyEnv, "", "", "")
		if err != nil {
			t.Fatalf("%q: %v", keyEnv, err)
		}
		if p.APIKey != want {
			t.Errorf("key from %q = %q; want %q", keyEnv, p.APIKey, want)
		}
	}
	delete(env, "OPENAI_BASE_URL")
	if _, err := ProviderFromEnvKey(getenv, "MISSING_API_KEY", "", "", ""); err == nil || !strings.Contains(err.Error(), "set MISSING_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}

// MaxResponseTokens is sent as max_tokens; left at 0, nothing is sent and
// the provider's own cap applies.
func TestMaxResponseTokens(t *testing.T) {
	for _, tt := range []struct {
		max  int
		want string // in the raw body; "" : no max_tokens at all
	}{{0, ""}, {512, `"max_tokens":512`}} {
		srv := startServer(t)
		srv.Enqueue(openaitest.Reply{Content: "ok"})
		l := newLoop(srv, &recorder{})
		l.MaxResponseTokens = tt.max
		if _, err := l.Run(ctxT(t), "hi"); err != nil {
			t.Fatal(err)
		}
		body := string(srv.Requests()[0].Body)
		if tt.want == "" && strings.Contains(body, "max_tokens") || tt.want != "" && !strings.Contains(body, tt.want) {
			t.Errorf("MaxResponseTokens %d: body %s", tt.max, body)
		}
	}
}

// fileTranscript is an agent's transcript in a new state directory, and
// the file it is kept in (what a kill -9 tears, what a secret must not
// reach).
func fileTranscript(t *testing.T) (*transcript.T, string) {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return transcript.Of(fsstate.New(s), "oak_0001"), s.TranscriptPath("oak_0001")
}
