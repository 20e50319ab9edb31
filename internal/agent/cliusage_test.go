package agent

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// What `codex exec --json` writes (codex-rs/exec's events, cut to the
// fields pm reads but in their real shapes): a thread, a turn with a
// command and a message, its usage (cached_input_tokens is part of
// input_tokens).
const codexRun = `{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"bash -lc 'pm say hi'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"bash -lc 'pm say hi'","aggregated_output":"msg-abc\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Posted."}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}
`

// What `gemini --output-format json` writes at the end of a run: one
// object, indented, with each model's tokens (prompt holds cached;
// thoughts are billed as output).
const geminiRun = `{
  "response": "Posted.",
  "stats": {
    "models": {
      "gemini-2.5-flash": {
        "api": {"totalRequests": 2, "totalErrors": 0, "totalLatencyMs": 5053},
        "tokens": {"prompt": 24939, "candidates": 20, "total": 25113, "cached": 21263, "thoughts": 154, "tool": 0}
      }
    },
    "tools": {"totalCalls": 1, "totalSuccess": 1, "totalFail": 0, "totalDurationMs": 1881,
      "totalDecisions": {"accept": 0, "reject": 0, "modify": 0, "auto_accept": 1}, "byName": {}},
    "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0}
  }
}
`

// Codex's and Gemini's usage, read from their own output formats, goes
// to the ledger priced by the table (Codex names no model: the agent's
// prices it), and to the agent's usage for budgets.agent; a run that
// reports none is not Reported (its cost is recorded unknown).
func TestCLIUsage(t *testing.T) {
	for _, tc := range []struct {
		output, model, in string
		want              cost.Usage
		wantModel         string
		turns             int64
		spent             store.Usage
		log               string
	}{
		{config.OutputCodexJSON, "gpt-5", codexRun, cost.Usage{Input: 315, Cached: 24448, Output: 122}, "gpt-5", 1,
			store.Usage{Turns: 1, ToolCalls: 1, Tokens: 24885}, "$ bash -lc 'pm say hi'  (exit 0)\nPosted.\ncodex: turn completed, 24763 tokens in (24448 cached), 122 out\n"},
		{config.OutputGeminiJSON, "", geminiRun, cost.Usage{Input: 3676, Cached: 21263, Output: 174}, "gemini-2.5-flash", 2,
			store.Usage{Turns: 2, ToolCalls: 1, Tokens: 25113}, "gemini: gemini-2.5-flash, 2 requests, 24939 tokens in (21263 cached), 174 out\n"},
	} {
		t.Run(tc.output, func(t *testing.T) {
			s := storetest.New(t)
			a := &store.Agent{Name: "cedar_0001", Prompt: "owner", TaskID: "tk-000001", Runtime: config.RuntimeExec, Model: tc.model, CreatedAt: time.Now()}
			if _, err := s.CreateAgent(a); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			u := newUsageStream(tc.output, &log, s, fsstate.New(s), slog.New(slog.NewTextHandler(io.Discard, nil)), a, newExecBudget(s, fsstate.New(s)))
			for in := tc.in; in != ""; { // in small pieces, as a pipe delivers it
				n := min(11, len(in))
				_, _ = u.Write([]byte(in[:n]))
				in = in[n:]
			}
			u.Flush()
			if !u.Reported() {
				t.Fatal("not reported")
			}
			if !strings.Contains(log.String(), tc.log) {
				t.Errorf("log %q, want it to hold %q", log.String(), tc.log)
			}
			entries, err := state.PricedCosts(fsstate.New(s), time.Time{}, s.Config().Prices)
			if err != nil || len(entries) != 1 {
				t.Fatalf("ledger %+v, %v", entries, err)
			}
			e := entries[0]
			if e.Model != tc.wantModel || e.Turns != tc.turns || e.Usage == nil || *e.Usage != tc.want || e.USD == nil || *e.USD <= 0 {
				t.Fatalf("entry %+v usage %+v", e, e.Usage)
			}
			rec, _ := s.Agent(a.Name)
			if got := (store.Usage{Turns: rec.Usage.Turns, ToolCalls: rec.Usage.ToolCalls, Tokens: rec.Usage.Tokens}); got != tc.spent {
				t.Errorf("spent %+v, want %+v", got, tc.spent)
			}
		})
	}
	// Output without usage (an error, plain text) is not a report: the run
	// is recorded unknown, never $0.
	s := storetest.New(t)
	a := &store.Agent{Name: "cedar_0002", Prompt: "owner", Runtime: config.RuntimeExec, CreatedAt: time.Now()}
	for _, tc := range []struct{ output, in string }{
		{config.OutputCodexJSON, `{"type":"error","message":"stream disconnected"}` + "\nplain\n"},
		{config.OutputGeminiJSON, `{"error": {"type": "ApiError", "message": "quota", "code": 429}}`},
	} {
		u := newUsageStream(tc.output, io.Discard, s, fsstate.New(s), slog.New(slog.NewTextHandler(io.Discard, nil)), a, newExecBudget(s, fsstate.New(s)))
		_, _ = u.Write([]byte(tc.in))
		u.Flush()
		if u.Reported() {
			t.Errorf("%s: %q reported usage", tc.output, tc.in)
		}
	}
}
