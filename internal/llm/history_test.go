package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/anthropictest"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/memstate"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// boundedTranscript is a transcript on files kept to bound bytes
// (limits.transcript_bytes; below the config's least, as a test may).
func boundedTranscript(t testing.TB, bound int64) *transcript.T {
	t.Helper()
	s := storetest.New(t)
	s.Config().Limits.TranscriptBytes = bound
	return transcript.Of(fsstate.New(s), "oak_0001")
}

// A running loop's history is kept to its transcript's bound: many turns of
// tool calls through the OpenAI-protocol test server with a small
// limits.transcript_bytes, and (a) every request the server receives holds
// at most the bound and one step, (b) every request is a conversation both
// protocols take (the OpenAI server refuses a tool result without its call;
// each request is also sent, in the Anthropic form, to the Anthropic server,
// which refuses the same), opening with a user's message, (c) at each cut
// the loop sends exactly what its transcript holds, and a run resuming the
// transcript goes on with the end of the same conversation.
//
// On files the transcript counts a line's newline and its header too, so
// it may be cut a little before the loop reads it back; in memory (and on a
// hub) it counts what the loop counts, and the history is the transcript
// after every append.
func TestHistoryKeptToItsTranscriptsBound(t *testing.T) {
	for _, backend := range []struct {
		name  string
		open  func(t *testing.T, bound int64) *transcript.T
		exact bool
	}{
		{"files", func(t *testing.T, bound int64) *transcript.T { return boundedTranscript(t, bound) }, false},
		{"memory", func(t *testing.T, bound int64) *transcript.T {
			m := memstate.New()
			m.Bounds = state.LogBounds{Transcript: bound}
			return transcript.Of(m, "oak_0001")
		}, true},
	} {
		t.Run(backend.name, func(t *testing.T) { historyKept(t, backend.open, backend.exact) })
	}
}

func historyKept(t *testing.T, open func(t *testing.T, bound int64) *transcript.T, exact bool) {
	const (
		bound = 16 << 10
		step  = 2 << 10 // more than one assistant call and its result
		turns = 3
		steps = 25 // of about 1.1 KiB each: over 4 bounds in all
	)
	srv := startServer(t)
	ant := anthropictest.New()
	t.Cleanup(ant.Close)
	tr := open(t, bound)
	pad := strings.Repeat("p", 500)
	think := Tool{Name: "think", Parameters: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, args json.RawMessage) (string, error) { return "noted " + pad, nil }}
	rec := &recorder{}
	l := newLoop(srv, rec, think)
	l.Transcript, l.HistoryBytes = tr, bound
	var (
		mu    sync.Mutex
		atCut = map[int][]openai.ChatCompletionMessage{} // the request after a cut: the transcript as the last cut before it left it
	)
	l.OnEvent = func(ev Event) {
		rec.event(ev)
		if ev.Kind != EventCut {
			return
		}
		kept, err := tr.Load()
		if err != nil {
			t.Error(err)
		}
		kept, _, _ = repairOpen(kept) // a step being run: its results come next
		mu.Lock()
		atCut[len(srv.Requests())] = kept
		mu.Unlock()
	}
	for turn := range turns {
		for i := range steps {
			srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "think", Arguments: fmt.Sprintf(`{"thought":"%d.%d %s"}`, turn, i, pad)}}})
		}
		srv.Enqueue(openaitest.Reply{Content: fmt.Sprint("answer ", turn)})
		if _, err := l.Run(ctxT(t), fmt.Sprint("turn ", turn)); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	for i, r := range reqs {
		if n := historyBytes(r.Messages[1:]); n > bound+step {
			t.Fatalf("request %d holds %d bytes of history, over the %d byte bound and one step", i, n, bound)
		}
		if r.Messages[1].Role != "user" {
			t.Fatalf("request %d opens with a %s message", i, r.Messages[1].Role)
		}
		if code, body := postAnthropic(t, ant.URL, r.Messages); code != http.StatusOK {
			t.Fatalf("request %d, in the Anthropic form: %d %s", i, code, body)
		}
	}
	cuts := rec.kinds(EventCut)
	if len(cuts) < 3 || len(atCut) < 3 {
		t.Fatalf("%d cuts (%d requests after one), want several", len(cuts), len(atCut))
	}
	for i, kept := range atCut {
		// What the step appended after its cut (its results) comes after.
		if got := wireOf(reqs[i].Messages[1:]); len(got) < len(kept) || !reflect.DeepEqual(got[:len(kept)], wireOfMessages(kept)) {
			t.Fatalf("request %d after a cut sends\n%v\nthe transcript holds\n%v", i, got, wireOfMessages(kept))
		}
		if !strings.HasPrefix(kept[0].Content, "[pm dropped the first ") {
			t.Fatalf("the cut history opens with %+v, want pm's mark", kept[0])
		}
	}

	// A run resuming the transcript goes on with the end of the running
	// loop's conversation (the files count a line's newline too, so they
	// may have been cut once more since the loop's last cut).
	running := wireOfMessages(l.History())
	if exact {
		kept, err := tr.Load()
		if err != nil || !reflect.DeepEqual(running, wireOfMessages(kept)) {
			t.Fatalf("the running loop holds\n%v\nthe transcript (%v)\n%v", running, err, wireOfMessages(kept))
		}
	}
	srv.Enqueue(openaitest.Reply{Content: "resumed"})
	l2 := newLoop(srv, &recorder{}, think)
	l2.Transcript, l2.HistoryBytes = tr, bound
	if _, err := l2.Run(ctxT(t), "go on"); err != nil {
		t.Fatal(err)
	}
	resumed := wireOf(srv.Requests()[len(reqs)].Messages)
	resumed = resumed[2 : len(resumed)-1] // the system prompt, the mark; the new message
	if len(resumed) < 2 || len(resumed) > len(running) || !reflect.DeepEqual(resumed, running[len(running)-len(resumed):]) ||
		exact && len(resumed) != len(running)-1 { // all but the mark

		t.Fatalf("the resumed run sends\n%v\nnot the end of the running loop's\n%v", resumed, running)
	}
}

// historyBytes is what msgs weigh as the server received them.
func historyBytes(msgs []openaitest.Message) int {
	n := 0
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		n += len(b)
	}
	return n
}

// wireOf and wireOfMessages are a conversation as the lines that matter to
// its validity and content: role, text, calls and results.
func wireOf(msgs []openaitest.Message) []string {
	var out []string
	for _, m := range msgs {
		s := m.Role + ":" + m.Content + ":" + m.ToolCallID
		for _, tc := range m.ToolCalls {
			s += ":" + tc.ID + "=" + tc.Name + tc.Arguments
		}
		out = append(out, s)
	}
	return out
}

func wireOfMessages(msgs []openai.ChatCompletionMessage) []string {
	var out []string
	for _, m := range msgs {
		s := m.Role + ":" + m.Content + ":" + m.ToolCallID
		for _, tc := range m.ToolCalls {
			s += ":" + tc.ID + "=" + tc.Function.Name + tc.Function.Arguments
		}
		out = append(out, s)
	}
	return out
}

// postAnthropic sends a chat conversation to an Anthropic Messages server
// as Anthropic's protocol has it: the system prompt apart, a call a
// tool_use block of its assistant message, the results of one step one
// user message of tool_result blocks.
func postAnthropic(t *testing.T, url string, msgs []openaitest.Message) (int, string) {
	t.Helper()
	type block map[string]any
	type message struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	var out []message
	for _, m := range msgs {
		switch m.Role {
		case "system":
			continue
		case "tool":
			if n := len(out); n > 0 && out[n-1].Role == "user" && out[n-1].Content[0]["type"] == "tool_result" {
				out[n-1].Content = append(out[n-1].Content, block{"type": "tool_result", "tool_use_id": m.ToolCallID, "content": m.Content})
				continue
			}
			out = append(out, message{"user", []block{{"type": "tool_result", "tool_use_id": m.ToolCallID, "content": m.Content}}})
			continue
		}
		var c []block
		if m.Content != "" {
			c = append(c, block{"type": "text", "text": m.Content})
		}
		for _, tc := range m.ToolCalls {
			c = append(c, block{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(tc.Arguments)})
		}
		out = append(out, message{m.Role, c})
	}
	body, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 100, "messages": out})
	resp, err := http.Post(url+"/v1/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// cutTranscript is a Transcript whose Load reads back what keep leaves of
// it (a state's cut, as a table sees it), counting its reads.
type cutTranscript struct {
	MemTranscript
	keep  func(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage
	loads int
}

func (c *cutTranscript) Load() ([]openai.ChatCompletionMessage, error) {
	c.loads++
	msgs, _ := c.MemTranscript.Load()
	return c.keep(msgs), nil
}

// The loop's check after each append, on its own: when it reads the
// transcript back and what it holds after.
func TestKeepBound(t *testing.T) {
	const bound = 1000
	msg := func(role string, n int) openai.ChatCompletionMessage {
		m := openai.ChatCompletionMessage{Role: role, Content: strings.Repeat("x", n)}
		m.Content = m.Content[:n-(int(entrySize(m))-n)] // its JSON is n bytes
		return m
	}
	mark := openai.ChatCompletionMessage{Role: "user", Content: "[pm dropped the first 3 messages of this conversation (1 bytes): ...]"}
	whole := func(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage { return msgs }
	lastTwo := func(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
		if len(msgs) <= 2 {
			return msgs
		}
		return append([]openai.ChatCompletionMessage{mark}, msgs[len(msgs)-2:]...)
	}
	tests := []struct {
		name      string
		bound     int64
		loaded    []openai.ChatCompletionMessage // what Run loaded
		keep      func([]openai.ChatCompletionMessage) []openai.ChatCompletionMessage
		appends   []int // sizes appended, one message each, user and assistant by turns
		wantLoads int   // reads after Run's
		wantLen   int   // messages in the history after
		wantCuts  int
	}{
		{"no bound: never read back", 0, nil, lastTwo, []int{900, 900, 900}, 0, 3, 0},
		{"at the bound: not read back", bound, nil, lastTwo, []int{500, 500}, 0, 2, 0},
		{"past it: what the transcript kept", bound, nil, lastTwo, []int{400, 400, 400}, 1, 3, 1},
		{"a read-back left it over: again a quarter later", bound, nil, whole, []int{1100, 100, 100, 60}, 2, 4, 0},
		{"a leading mark is not counted", bound, []openai.ChatCompletionMessage{mark, msg("user", 500)}, lastTwo, []int{500}, 0, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &cutTranscript{keep: tt.keep}
			tr.msgs = tt.loaded
			rec := &recorder{}
			l := &Loop{Transcript: tr, HistoryBytes: tt.bound, OnEvent: rec.event}
			if err := l.load(); err != nil {
				t.Fatal(err)
			}
			for i, n := range tt.appends {
				if err := l.append(msg([]string{"user", "assistant"}[i%2], n)); err != nil {
					t.Fatal(err)
				}
			}
			if tr.loads-1 != tt.wantLoads || len(l.history) != tt.wantLen || len(rec.kinds(EventCut)) != tt.wantCuts {
				t.Fatalf("%d reads back, %d messages held, %d cuts; want %d, %d, %d",
					tr.loads-1, len(l.history), len(rec.kinds(EventCut)), tt.wantLoads, tt.wantLen, tt.wantCuts)
			}
		})
	}
}

// One step bigger than the bound (an answer of several calls whose results
// pass it): no valid cut shortens it, so the model gets it whole, every
// call with its result; the conversation goes on over the bound until a
// quarter of it more is appended, when the cut drops the step and what
// came before it: the model reads the mark, then the next step.
func TestAStepOverTheBound(t *testing.T) {
	const bound = 16 << 10
	srv := startServer(t)
	tr := boundedTranscript(t, bound)
	big := Tool{Name: "big", Parameters: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			return strings.Repeat("b", 7<<10), nil
		}}
	small := Tool{Name: "small", Parameters: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, args json.RawMessage) (string, error) { return strings.Repeat("s", 500), nil }}
	l := newLoop(srv, &recorder{}, big, small)
	l.Transcript, l.HistoryBytes = tr, bound
	srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "big", Arguments: `{}`}, {Name: "big", Arguments: `{}`}, {Name: "big", Arguments: `{}`}}})
	for range 12 { // about 6 KiB: past a quarter of the bound
		srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "small", Arguments: `{}`}}})
	}
	srv.Enqueue(openaitest.Reply{Content: "done"})
	if _, err := l.Run(ctxT(t), "make it big"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	results := func(r openaitest.Request) (n int) {
		for _, m := range r.Messages {
			if m.Role == "tool" && strings.HasPrefix(m.Content, "bbb") {
				n++
			}
		}
		return n
	}
	if n := results(reqs[1]); n != 3 || historyBytes(reqs[1].Messages[1:]) <= bound {
		t.Fatalf("the request after the big step holds %d of its 3 results, %d bytes", n, historyBytes(reqs[1].Messages[1:]))
	}
	last := reqs[len(reqs)-1]
	if n := results(last); n != 0 || !strings.HasPrefix(last.Messages[1].Content, "[pm dropped the first ") || last.Messages[2].Role != "assistant" {
		t.Fatalf("the last request holds %d big results and opens %+v, want the mark then a step", n, last.Messages[1:3])
	}
	for i, r := range reqs {
		if n := results(r); n != 0 && n != 3 {
			t.Fatalf("request %d holds %d of the big step's 3 results", i, n)
		}
	}
}
