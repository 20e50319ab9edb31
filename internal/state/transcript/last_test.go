package transcript

import (
	"encoding/json"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/memstate"
	"github.com/plasmodium/pm/internal/store"
)

// transcriptLines are every kind of line Load meets on files: what
// Append writes, valid JSON that still fits a message, valid JSON that does
// not (skipped and reported), malformed, torn and oversized lines, blank
// lines and CRLF endings (oversized lines are in oversized).
var transcriptLines = []string{
	`{"role":"user","content":"hi"}`,
	`{"role":"assistant","content":"ok","tool_calls":[{"id":"c1","type":"function","function":{"name":"say","arguments":"{\"a\":\"\\\"b\"}"}}]}`,
	`{"role":"tool","content":"done","tool_call_id":"c1"}`,
	`{"role":"assistant","reasoning_content":"hm","refusal":"no","name":"x"}`,
	` { "role" : "user" , "content" : "sp\u00e9ced" } `,
	`{"role":"user","content":"crlf"}` + "\r",
	`null`,
	`{}`,
	`{"role":null,"content":null,"tool_calls":null}`,
	`{"Role":"user","CONTENT":"case-folded keys"}`,
	`{"role":"user","content":"dup","content":"last wins"}`,
	`{"role":"user","unknown":[1,{"a":2}],"content":"extra key"}`,
	`{"role":"user","content":[{"type":"text","text":"multi"}]}`,
	`{"role":"assistant","tool_calls":[{"index":1,"id":"c2","function":null}]}`,
	`{"role":"assistant","tool_calls":[{"index":1.5}]}`, // does not fit
	`{"role":5}`, // does not fit
	`{"role":"user","content":"a","content":7}`, // does not fit
	`[1,2]`,                          // does not fit
	`"a string"`,                     // does not fit
	`{"role":"user","content":"torn`, // malformed
	`{"role":"user","content":"whole but torn"}` + jsonl.TornMarker,
	`not json at all`,
	``,
	`   `,
}

// oversized is a line over jsonl.MaxLine, skipped and reported.
var oversized = `{"role":"user","content":"` + strings.Repeat("x", jsonl.MaxLine) + `"}`

// Last gives exactly Load's last n messages and Load's count, on
// transcript files mixing every kind of line, with and without an
// unterminated final line.
func TestLastMatchesLoad(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 30; trial++ {
		var b strings.Builder
		for range rng.Intn(30) {
			b.WriteString(transcriptLines[rng.Intn(len(transcriptLines))] + "\n")
		}
		if trial == 1 {
			b.WriteString(oversized + "\n" + transcriptLines[0] + "\n")
		}
		if trial%3 == 0 {
			b.WriteString(`{"role":"user","content":"unterminated"}`)
		}
		s, tr := onFiles(t, "oak_0001")
		if err := os.MkdirAll(s.AgentDir("oak_0001"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.TranscriptPath("oak_0001"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		all, err := tr.Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, len(all) / 2, len(all), len(all) + 1} {
			if n < 1 {
				continue
			}
			got, total, err := tr.Last(n)
			want := all[max(len(all)-n, 0):]
			if err != nil || total != len(all) || !sameMessages(got, want) {
				t.Fatalf("trial %d, Last(%d) = %d messages of %d, %v\nwant %d of %d\nfile:\n%.2000s",
					trial, n, len(got), total, err, len(want), len(all), b.String())
			}
		}
	}
}

// onFiles is agent name's transcript in a new state directory.
func onFiles(t *testing.T, name string) (*store.Store, *T) {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return s, Of(fsstate.New(s), name)
}

func sameMessages(a, b []openai.ChatCompletionMessage) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// A missing transcript is empty, as Load has it, and not started.
func TestLastMissing(t *testing.T) {
	for name, tr := range map[string]*T{"files": func() *T { _, tr := onFiles(t, "oak_0001"); return tr }(), "memory": Of(memstate.New(), "oak_0001")} {
		got, total, err := tr.Last(3)
		started, serr := tr.Started()
		if len(got) != 0 || total != 0 || err != nil || started || serr != nil {
			t.Errorf("%s: Last on a missing transcript = %v, %d, %v; started %v, %v", name, got, total, err, started, serr)
		}
	}
}

// What Append writes, Load and Last read back, on every backend at hand.
func TestAppendLoadLast(t *testing.T) {
	msgs := []openai.ChatCompletionMessage{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: `{"x":1}`}}}},
		{Role: "tool", ToolCallID: "c", Content: "r"},
	}
	for name, tr := range map[string]*T{"files": func() *T { _, tr := onFiles(t, "oak_0001"); return tr }(), "memory": Of(memstate.New(), "oak_0001")} {
		if err := tr.Append(msgs...); err != nil {
			t.Fatal(err)
		}
		all, err := tr.Load()
		last, total, lerr := tr.Last(2)
		started, _ := tr.Started()
		if err != nil || lerr != nil || !sameMessages(all, msgs) || total != 3 || !sameMessages(last, msgs[1:]) || !started {
			t.Errorf("%s: Load = %v, %v; Last(2) = %v, %d, %v; started %v", name, all, err, last, total, lerr, started)
		}
	}
}

// plainMessage never vouches for a line json.Unmarshal refuses.
func FuzzPlainMessage(f *testing.F) {
	for _, l := range transcriptLines {
		if len(l) < 4096 {
			f.Add([]byte(l))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || !plainMessage(raw) {
			return
		}
		var m openai.ChatCompletionMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("plainMessage vouched for %q, which does not decode: %v", raw, err)
		}
	})
}

// plainMessage spares the decode of what Append writes.
func TestPlainMessageCoversAppend(t *testing.T) {
	for _, m := range []openai.ChatCompletionMessage{
		{Role: "user", Content: "a \"quoted\" \\ line\n<b>"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: `{"x":1}`}}}},
		{Role: "tool", ToolCallID: "c", Content: "r"},
	} {
		raw, _ := json.Marshal(m)
		if !plainMessage(raw) {
			t.Errorf("plainMessage(%s) = false", raw)
		}
	}
}
