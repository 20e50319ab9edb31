package llm

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/openaitest"
)

// callLog is a tool that records every call it runs.
type callLog struct {
	mu   sync.Mutex
	runs []string
}

func (c *callLog) tool(name string) Tool {
	return Tool{Name: name, Call: func(ctx context.Context, args json.RawMessage) (string, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.runs = append(c.runs, name+" "+string(args))
		return "ran " + name, nil
	}}
}

func docOf(tool string) string { return "# Tool: " + tool + "\n\n## Summary\nthe doc of " + tool }

func decisions(rec *recorder) []string {
	var out []string
	for _, e := range rec.kinds(EventDocDecision) {
		out = append(out, e.Tool+" "+e.Text)
	}
	return out
}

func TestDocPreview(t *testing.T) {
	first := openaitest.ToolCall{ID: "c1", Name: "write_file", Arguments: `{"path":"wrong.txt","content":"x"}`}
	tests := []struct {
		name    string
		on      bool
		replies []openaitest.Reply
		// runs are the calls that ran, in order; decided the decision events.
		runs     []string
		decided  []string
		previews int
		requests int
		// runDecision is the decision the run call's result starts with.
		runDecision string
	}{
		{
			name:    "off: the call runs at once, no extra turn",
			replies: []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{first}}, {Content: "done"}},
			runs:    []string{"write_file " + first.Arguments}, requests: 2,
		},
		{
			name: "revised: the corrected call runs, the first never does",
			on:   true,
			replies: []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{first}},
				{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "write_file", Arguments: `{"path":"right.txt","content":"x"}`}}},
				{Content: "done"}},
			runs: []string{`write_file {"path":"right.txt","content":"x"}`}, decided: []string{"write_file revised", "write_file dropped"},
			previews: 1, requests: 3, runDecision: "revised",
		},
		{
			name: "confirmed: the same arguments in another key order",
			on:   true,
			replies: []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{first}},
				{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "write_file", Arguments: `{ "content": "x", "path": "wrong.txt" }`}}},
				{Content: "done"}},
			runs: []string{`write_file { "content": "x", "path": "wrong.txt" }`}, decided: []string{"write_file confirmed"},
			previews: 1, requests: 3, runDecision: "confirmed",
		},
		{
			name:    "dropped: an answer without calls runs nothing",
			on:      true,
			replies: []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{first}}, {Content: "on second thought, no"}},
			decided: []string{"write_file dropped"}, previews: 1, requests: 2,
		},
		{
			name:     "an unknown tool gets its error, not a preview",
			on:       true,
			replies:  []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "nosuch", Arguments: `{}`}}}, {Content: "sorry"}},
			requests: 2,
		},
		{
			name: "beside a previewed call, an unknown tool gets its error",
			on:   true,
			replies: []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{first, {ID: "c9", Name: "nosuch", Arguments: `{}`}}},
				{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "write_file", Arguments: first.Arguments}}},
				{Content: "done"}},
			runs: []string{"write_file " + first.Arguments}, decided: []string{"write_file confirmed"},
			previews: 1, requests: 3, runDecision: "confirmed",
		},
		{
			name: "a revision to another tool is previewed in its turn",
			on:   true,
			replies: []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{first}},
				{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "read_file", Arguments: `{"path":"wrong.txt"}`}}},
				{ToolCalls: []openaitest.ToolCall{{ID: "c3", Name: "read_file", Arguments: `{"path":"wrong.txt"}`}}},
				{Content: "done"}},
			runs:     []string{`read_file {"path":"wrong.txt"}`},
			decided:  []string{"read_file revised", "write_file dropped", "read_file confirmed"},
			previews: 2, requests: 4, runDecision: "confirmed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			srv.Enqueue(tt.replies...)
			rec := &recorder{}
			var log callLog
			l := newLoop(srv, rec, log.tool("write_file"), log.tool("read_file"))
			if tt.on {
				l.DocPreview = docOf
			}
			if _, err := l.Run(ctxT(t), "go"); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(log.runs, tt.runs) {
				t.Errorf("ran %q, want %q", log.runs, tt.runs)
			}
			if got := decisions(rec); !reflect.DeepEqual(got, tt.decided) {
				t.Errorf("decisions %q, want %q", got, tt.decided)
			}
			if n := len(rec.kinds(EventDocPreview)); n != tt.previews {
				t.Errorf("%d preview events, want %d", n, tt.previews)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.requests {
				t.Fatalf("%d requests, want %d", len(reqs), tt.requests)
			}
			if tt.previews == 0 {
				for _, m := range l.History() {
					if strings.Contains(m.Content, "code-designer") {
						t.Errorf("mode off, yet the transcript has %q", m.Content)
					}
				}
				return
			}
			// The second request carries the preview as the call's result,
			// before anything ran.
			var preview openaitest.Message
			for _, m := range reqs[1].Messages {
				if m.Role == "tool" && m.ToolCallID == "c1" {
					preview = m
				}
			}
			if !strings.HasPrefix(preview.Content, previewMarker) || !strings.Contains(preview.Content, docOf("write_file")) {
				t.Errorf("second request answers c1 with %+v, want the preview of write_file", preview)
			}
			if ev := rec.kinds(EventDocPreview)[0]; ev.Tool != "write_file" || ev.CallID != "c1" || ev.Text != docOf("write_file") || ev.Args != first.Arguments {
				t.Errorf("preview event %+v", ev)
			}
			if len(tt.runs) > 0 {
				h := l.History()
				res := h[len(h)-2] // the run call's result, before the final answer
				if want := "code-designer: " + tt.runDecision + " after the doc preview.\nran "; !strings.HasPrefix(res.Content, want) {
					t.Errorf("the run call's result does not record the decision: %q", res.Content)
				}
			}
		})
	}
}

// A host killed after the preview resumes with the round pending: the
// model's confirmation runs without a second preview.
func TestDocPreviewResumesPendingRound(t *testing.T) {
	call := openai.ToolCall{ID: "c1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "write_file", Arguments: `{"path":"a"}`}}
	tr := &MemTranscript{}
	if err := tr.Append(
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "go"},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{call}},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "c1", Content: previewResult(call, docOf("write_file"))},
	); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t)
	srv.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "write_file", Arguments: `{"path":"a"}`}}}, openaitest.Reply{Content: "done"})
	rec := &recorder{}
	var log callLog
	l := newLoop(srv, rec, log.tool("write_file"))
	l.Transcript, l.DocPreview = tr, docOf
	if _, err := l.Run(ctxT(t), ""); err != nil {
		t.Fatal(err)
	}
	if want := []string{`write_file {"path":"a"}`}; !reflect.DeepEqual(log.runs, want) {
		t.Errorf("ran %q, want %q", log.runs, want)
	}
	if got := decisions(rec); !reflect.DeepEqual(got, []string{"write_file confirmed"}) || len(rec.kinds(EventDocPreview)) != 0 {
		t.Errorf("decisions %q, %d previews; want one confirmation and no new preview", got, len(rec.kinds(EventDocPreview)))
	}
}
