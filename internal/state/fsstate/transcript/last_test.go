package transcript

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/jsonl"
)

// transcriptLines are every kind of line File.Load meets: what
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

// Last gives exactly Load's last n messages, Load's count and Load's
// bad-line reports, on transcripts mixing every kind of line, with and
// without an unterminated final line.
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
		path := filepath.Join(t.TempDir(), "transcript.jsonl")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var loadBad, lastBad []jsonl.BadLine
		all, err := (&File{Path: path, Bad: func(b jsonl.BadLine) { loadBad = append(loadBad, b) }}).Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, len(all) / 2, len(all), len(all) + 1} {
			if n < 1 {
				continue
			}
			lastBad = nil
			got, total, err := (&File{Path: path, Bad: func(b jsonl.BadLine) { lastBad = append(lastBad, b) }}).Last(n)
			want := all[max(len(all)-n, 0):]
			if err != nil || total != len(all) || !sameMessages(got, want) || !reflect.DeepEqual(lastBad, loadBad) {
				t.Fatalf("trial %d, Last(%d) = %d messages of %d, %v, bad %v\nwant %d of %d, bad %v\nfile:\n%.2000s",
					trial, n, len(got), total, err, lastBad, len(want), len(all), loadBad, b.String())
			}
		}
	}
}

func sameMessages(a, b []openai.ChatCompletionMessage) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// A missing transcript is empty, as Load has it.
func TestLastMissing(t *testing.T) {
	got, total, err := (&File{Path: filepath.Join(t.TempDir(), "none.jsonl")}).Last(3)
	if len(got) != 0 || total != 0 || err != nil {
		t.Errorf("Last on a missing file = %v, %d, %v", got, total, err)
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
