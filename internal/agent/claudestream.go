package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/store"
)

// maxStreamLine bounds one buffered line of a CLI's output (a huge tool
// result is cut, not held).
const maxStreamLine = 1 << 20

// claudeStream reads Claude Code's stream-json from the CLI's stdout: it
// writes a readable line per event to out (the agent's log) and reports
// what the agent spent. A line that is not JSON is passed through.
type claudeStream struct {
	out      io.Writer
	spent    func(store.Usage)
	buf      []byte
	seen     map[string]bool // assistant message ids already counted
	estimate int64           // tokens counted from this run's assistant events
	// billed, when set, gets each result's cost (execcost.go); model is
	// the run's, from its init or assistant events; reported is set once a
	// result said what the run used.
	billed   func(cost.Entry)
	model    string
	reported bool
}

func newClaudeStream(out io.Writer, spent func(store.Usage)) *claudeStream {
	return &claudeStream{out: out, spent: spent, seen: map[string]bool{}}
}

func (c *claudeStream) Write(p []byte) (int, error) {
	c.buf = feedLines(c.buf, p, c.line)
	return len(p), nil
}

// Flush handles a last line without its newline.
func (c *claudeStream) Flush() {
	if len(c.buf) > 0 {
		c.line(c.buf)
		c.buf = c.buf[:0]
	}
}

type streamUsage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
}

func (u streamUsage) total() int64 { return u.Input + u.Output + u.CacheCreation + u.CacheRead }

type streamEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Model   string `json:"model"`
	Session string `json:"session_id"`
	Message struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Content []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			Input   json.RawMessage `json:"input"`
			Content json.RawMessage `json:"content"`
		} `json:"content"`
		Usage streamUsage `json:"usage"`
	} `json:"message"`
	NumTurns int64       `json:"num_turns"`
	Result   string      `json:"result"`
	Usage    streamUsage `json:"usage"`
	Cost     *float64    `json:"total_cost_usd"`
}

func (c *claudeStream) line(raw []byte) {
	var ev streamEvent
	if len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	if raw[0] != '{' || json.Unmarshal(raw, &ev) != nil || ev.Type == "" {
		c.printf("%s\n", raw)
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			c.printf("claude: session %s, model %s\n", ev.Session, ev.Model)
			c.model = ev.Model
		}
	case "assistant":
		if ev.Message.Model != "" {
			c.model = ev.Message.Model
		}
		c.assistant(&ev)
	case "user":
		for _, b := range ev.Message.Content {
			if b.Type == "tool_result" {
				c.printf("  → %s\n", clip(flattenResult(b.Content), 400))
			}
		}
	case "result":
		usd := "cost unknown"
		if ev.Cost != nil {
			usd = fmt.Sprintf("$%.4f", *ev.Cost)
		}
		c.printf("claude: %s after %d turns, %d tokens, %s\n", ev.Subtype, ev.NumTurns, ev.Usage.total(), usd)
		// The result's usage is the run's exact total: replace the estimate.
		c.spent(store.Usage{Tokens: ev.Usage.total() - c.estimate})
		c.estimate = ev.Usage.total()
		c.bill(&ev)
	}
}

// bill hands a result's cost on: Claude Code's own total_cost_usd when it
// sent one, else the usage priced by the table (unknown for a model
// without a price).
func (c *claudeStream) bill(ev *streamEvent) {
	c.reported = true
	if c.billed == nil {
		return
	}
	u := ev.Usage
	e := cost.Entry{Model: c.model, Turns: ev.NumTurns,
		Usage: &cost.Usage{Input: u.Input, Cached: u.CacheRead, CacheWrite: u.CacheCreation, Output: u.Output}}
	if ev.Cost != nil {
		e.USD, e.Source = ev.Cost, cost.SourceReported
	}
	c.billed(e)
}

func (c *claudeStream) assistant(ev *streamEvent) {
	var u store.Usage
	if id := ev.Message.ID; id != "" && !c.seen[id] {
		// One model call may arrive as several events (one per block);
		// count it, and its usage, once.
		c.seen[id] = true
		u.Turns, u.Tokens = 1, ev.Message.Usage.total()
		c.estimate += u.Tokens
	}
	for _, b := range ev.Message.Content {
		switch b.Type {
		case "text":
			c.printf("%s\n", b.Text)
		case "tool_use":
			u.ToolCalls++
			var in struct {
				Command string `json:"command"`
			}
			if b.Name == "Bash" && json.Unmarshal(b.Input, &in) == nil && in.Command != "" {
				c.printf("$ %s\n", in.Command)
			} else {
				c.printf("tool %s %s\n", b.Name, clip(string(b.Input), 400))
			}
		}
	}
	if u != (store.Usage{}) {
		c.spent(u)
	}
}

func (c *claudeStream) printf(format string, args ...any) { _, _ = fmt.Fprintf(c.out, format, args...) }

// flattenResult is a tool result's text: a string or text blocks.
func flattenResult(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
