package agent

import (
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/store"
)

// Lines as Claude Code 2.1 writes them with --output-format stream-json
// --verbose (cut to the fields pm reads).
const (
	csInit      = `{"type":"system","subtype":"init","session_id":"s-1","model":"claude-x","tools":["Bash"]}`
	csToolUse   = `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"pm say hi"}}],"usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}`
	csResult1   = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"msg-abc"}]}}`
	csText      = `{"type":"assistant","message":{"id":"msg_2","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":120,"output_tokens":1}}}`
	csTextAgain = `{"type":"assistant","message":{"id":"msg_2","content":[{"type":"tool_use","name":"Read","input":{"file_path":"a"}}],"usage":{"input_tokens":120,"output_tokens":1}}}`
	csResult    = `{"type":"result","subtype":"success","num_turns":2,"result":"Done.","total_cost_usd":0.5,"usage":{"input_tokens":220,"output_tokens":14,"cache_creation_input_tokens":0,"cache_read_input_tokens":6}}`
)

func TestClaudeStream(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		log   string
		spent store.Usage
	}{
		{"a turn with a tool call", csInit + "\n" + csToolUse + "\n" + csResult1 + "\n",
			"claude: session s-1, model claude-x\n$ pm say hi\n  → msg-abc\n", store.Usage{Turns: 1, ToolCalls: 1, Tokens: 101}},
		{"one message in two events counts once", csText + "\n" + csTextAgain + "\n",
			"Done.\ntool Read {\"file_path\":\"a\"}\n", store.Usage{Turns: 1, ToolCalls: 1, Tokens: 121}},
		{"the result's usage is the exact total", csToolUse + "\n" + csText + "\n" + csResult + "\n",
			"$ pm say hi\nDone.\nclaude: success after 2 turns, 240 tokens, $0.5000\n", store.Usage{Turns: 2, ToolCalls: 1, Tokens: 240}},
		{"text that is not JSON passes", "plain line\n{not json\n", "plain line\n{not json\n", store.Usage{}},
		{"a last line without newline", csText, "Done.\n", store.Usage{Turns: 1, Tokens: 121}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log strings.Builder
			var got store.Usage
			c := newClaudeStream(&log, func(u store.Usage) {
				got.Turns += u.Turns
				got.ToolCalls += u.ToolCalls
				got.Tokens += u.Tokens
			})
			// Written in small pieces, as a pipe delivers it.
			for in := tc.in; in != ""; {
				n := min(7, len(in))
				if _, err := c.Write([]byte(in[:n])); err != nil {
					t.Fatal(err)
				}
				in = in[n:]
			}
			c.Flush()
			if log.String() != tc.log {
				t.Errorf("log\n%q\nwant\n%q", log.String(), tc.log)
			}
			if got != tc.spent {
				t.Errorf("spent %+v, want %+v", got, tc.spent)
			}
		})
	}
}

func TestOverUsage(t *testing.T) {
	b := config.Budget{MaxTurns: 10, MaxToolCalls: 20, MaxTokens: 1000}
	tests := []struct {
		u    store.Usage
		want string
	}{
		{store.Usage{Turns: 10, ToolCalls: 20, Tokens: 1000}, ""},
		{store.Usage{Turns: 11}, "over its turn budget: 11 of 10"},
		{store.Usage{ToolCalls: 21}, "over its tool-call budget: 21 of 20"},
		{store.Usage{Tokens: 1001}, "over its token budget: 1001 of 1000"},
	}
	for _, tc := range tests {
		got := overUsage(b, tc.u)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.u, got, tc.want)
		}
	}
	if overUsage(config.Budget{}, store.Usage{Tokens: 1 << 40}) != "" {
		t.Error("a zero budget bounds nothing")
	}
}
