package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// What Codex CLI and Gemini CLI report of their usage (runtime.exec.output
// codex-json, gemini-json; their presets ask for it), read from the CLI's
// stdout like Claude Code's stream-json (claudestream.go): a readable log,
// the turns and tokens checked against budgets.agent, and a ledger entry
// priced by the table. Neither CLI reports dollars; Codex names no model
// (the agent's own model prices it, or it is unknown).

// usageStream is a reader of a CLI's output that reports usage.
type usageStream interface {
	io.Writer
	Flush()
	Reported() bool // some output said what the run used
}

// newUsageStream is the reader output names (nil: none, the output is
// passed through and the run's cost is unknown).
func newUsageStream(output string, out io.Writer, s *store.Store, st state.State, log *slog.Logger, a *store.Agent, b *execBudget) usageStream {
	spent, billed := b.spender(s, st, a), b.biller(s, st, log, a)
	switch output {
	case config.OutputClaudeStream:
		c := newClaudeStream(out, spent)
		c.billed = billed
		return c
	case config.OutputCodexJSON:
		return &codexStream{out: out, spent: spent, billed: billed, model: a.Model}
	case config.OutputGeminiJSON:
		return &geminiJSON{out: out, spent: spent, billed: billed}
	}
	return nil
}

// Reported says whether a result said what the run used.
func (c *claudeStream) Reported() bool { return c.reported }

// feedLines appends p to buf and hands each complete line to line (lines
// longer than maxStreamLine are cut), returning what is left of a line.
func feedLines(buf, p []byte, line func([]byte)) []byte {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(buf)+len(p) <= maxStreamLine {
				buf = append(buf, p...)
			}
			break
		}
		if len(buf)+i <= maxStreamLine {
			buf = append(buf, p[:i]...)
		}
		line(buf)
		buf, p = buf[:0], p[i+1:]
	}
	return buf
}

// codexStream reads `codex exec --json`: one JSON event a line
// (thread.started, turn.started, item.started/updated/completed,
// turn.completed with the turn's usage, turn.failed, error).
type codexStream struct {
	out      io.Writer
	spent    func(store.Usage)
	billed   func(cost.Entry)
	model    string
	buf      []byte
	reported bool
}

type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Item     struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Command  string `json:"command"`
		ExitCode *int   `json:"exit_code"`
		Status   string `json:"status"`
	} `json:"item"`
	Usage *struct {
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

func (c *codexStream) Write(p []byte) (int, error) {
	c.buf = feedLines(c.buf, p, c.line)
	return len(p), nil
}

func (c *codexStream) Flush() {
	if len(c.buf) > 0 {
		c.line(c.buf)
		c.buf = c.buf[:0]
	}
}

func (c *codexStream) Reported() bool { return c.reported }

func (c *codexStream) line(raw []byte) {
	var ev codexEvent
	if len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	if raw[0] != '{' || json.Unmarshal(raw, &ev) != nil || ev.Type == "" {
		fmt.Fprintf(c.out, "%s\n", raw)
		return
	}
	switch ev.Type {
	case "thread.started":
		fmt.Fprintf(c.out, "codex: thread %s\n", ev.ThreadID)
	case "item.completed":
		switch ev.Item.Type {
		case "agent_message", "reasoning":
			fmt.Fprintf(c.out, "%s\n", ev.Item.Text)
		case "command_execution":
			code := "?"
			if ev.Item.ExitCode != nil {
				code = fmt.Sprint(*ev.Item.ExitCode)
			}
			fmt.Fprintf(c.out, "$ %s  (exit %s)\n", ev.Item.Command, code)
			c.spent(store.Usage{ToolCalls: 1})
		}
	case "turn.failed":
		if ev.Error != nil {
			fmt.Fprintf(c.out, "codex: turn failed: %s\n", ev.Error.Message)
		}
	case "error":
		fmt.Fprintf(c.out, "codex: error: %s\n", ev.Message)
	case "turn.completed":
		if ev.Usage == nil {
			return
		}
		u := ev.Usage
		cached := min(u.Cached, u.Input) // cached_input_tokens is part of input_tokens
		fmt.Fprintf(c.out, "codex: turn completed, %d tokens in (%d cached), %d out\n", u.Input, cached, u.Output)
		c.reported = true
		c.spent(store.Usage{Turns: 1, Tokens: u.Input + u.Output})
		c.billed(cost.Entry{Model: c.model, Turns: 1, Usage: &cost.Usage{Input: u.Input - cached, Cached: cached, Output: u.Output}})
	}
}

// geminiJSON reads `gemini --output-format json`: one JSON object at the
// end of the run, {"response", "stats": {"models": {NAME: {"api":
// {"totalRequests", ...}, "tokens": {"prompt", "candidates", "total",
// "cached", "thoughts", "tool"}}}, "tools": {"totalCalls", ...}}} (or
// {"error": {...}}). The output passes through; its usage is read at the
// end, one ledger entry per model.
type geminiJSON struct {
	out      io.Writer
	spent    func(store.Usage)
	billed   func(cost.Entry)
	buf      bytes.Buffer
	reported bool
}

// maxGeminiOutput bounds what is kept of the output to read its usage.
const maxGeminiOutput = 8 << 20

type geminiResult struct {
	Response string `json:"response"`
	Stats    *struct {
		Models map[string]struct {
			API struct {
				Requests int64 `json:"totalRequests"`
			} `json:"api"`
			Tokens struct {
				Prompt     int64 `json:"prompt"`
				Candidates int64 `json:"candidates"`
				Total      int64 `json:"total"`
				Cached     int64 `json:"cached"`
				Thoughts   int64 `json:"thoughts"`
			} `json:"tokens"`
		} `json:"models"`
		Tools struct {
			Calls int64 `json:"totalCalls"`
		} `json:"tools"`
	} `json:"stats"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (g *geminiJSON) Write(p []byte) (int, error) {
	if g.buf.Len()+len(p) <= maxGeminiOutput {
		g.buf.Write(p)
	}
	return g.out.Write(p)
}

func (g *geminiJSON) Reported() bool { return g.reported }

// Flush reads the run's usage from the JSON object it ended with.
func (g *geminiJSON) Flush() {
	data := g.buf.Bytes()
	start := bytes.IndexByte(data, '{') // anything printed before the object is not it
	var r geminiResult
	if start < 0 || json.Unmarshal(data[start:], &r) != nil || r.Stats == nil {
		return
	}
	g.reported = true
	if r.Stats.Tools.Calls > 0 {
		g.spent(store.Usage{ToolCalls: r.Stats.Tools.Calls})
	}
	for model, m := range r.Stats.Models {
		t := m.Tokens
		cached := min(t.Cached, t.Prompt) // cached is part of the prompt
		out := t.Candidates + t.Thoughts  // thinking is billed as output
		fmt.Fprintf(g.out, "\ngemini: %s, %d requests, %d tokens in (%d cached), %d out\n", model, m.API.Requests, t.Prompt, cached, out)
		g.spent(store.Usage{Turns: m.API.Requests, Tokens: t.Prompt + out})
		g.billed(cost.Entry{Model: model, Turns: m.API.Requests, Usage: &cost.Usage{Input: t.Prompt - cached, Cached: cached, Output: out}})
	}
}
