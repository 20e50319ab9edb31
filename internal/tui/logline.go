package tui

import (
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/render"
)

// LogLine is one line of the message log: who spoke to whom, and what.
type LogLine struct {
	Time  time.Time
	From  string
	To    string
	Text  string
	Depth int // how deep in the cascade started by the human
}

// cascade turns bus events into log lines, indenting each call under the
// call that caused it: a request from A to B puts B one level under A, and
// B's tool calls and results sit at B's level.
type cascade struct {
	depth map[string]int
}

func newCascade() *cascade { return &cascade{depth: map[string]int{}} }

// line is the log line for ev, or false when ev is not a message.
func (c *cascade) line(ev bus.Event) (LogLine, bool) {
	l := LogLine{Time: ev.Time}
	switch ev.Kind {
	case bus.POKind("request"), bus.POKind("notice"):
		l.From, l.To, l.Text = ev.Actor, ev.Agent, body(ev)
		l.Depth = c.depth[l.From]
		c.depth[l.To] = l.Depth + 1
	case bus.POKind("reply"):
		l.From, l.To, l.Text = ev.Actor, ev.Agent, body(ev)
		l.Depth = c.depth[l.To]
	case bus.EvToolCall:
		tool, args, _ := strings.Cut(ev.Text, " ")
		l.From, l.To, l.Text = ev.Actor, tool, args
		l.Depth = c.depth[l.From]
	case bus.EvToolResult:
		tool, res, _ := strings.Cut(ev.Text, ": ")
		l.From, l.To, l.Text = tool, ev.Actor, res
		l.Depth = c.depth[l.To]
	case bus.EvRequestAsked:
		l.From, l.To, l.Text = ev.Actor, "human", ev.Text
		l.Depth = c.depth[l.From]
	case bus.EvRequestAnswered:
		l.From, l.To, l.Text = ev.Actor, ev.Agent, ev.Text
		l.Depth = c.depth[l.To]
	case bus.EvCapabilityCreated:
		l.From, l.To, l.Text = ev.Actor, "create_capability", ev.Text
		l.Depth = c.depth[l.From]
	default:
		return LogLine{}, false
	}
	return l, true
}

// body is an inbox event's text without the "from → to: " the inbox
// prefixes it with.
func body(ev bus.Event) string {
	_, rest, ok := strings.Cut(ev.Text, ev.Actor+" → "+ev.Agent+": ")
	if !ok {
		return ev.Text
	}
	return rest
}

// Format is the line as shown: time, indent, from → to: text, all
// agent-written parts escaped to one line.
func (l LogLine) Format(loc *time.Location) string {
	var b strings.Builder
	b.WriteString(l.Time.In(loc).Format("15:04:05"))
	b.WriteString("  ")
	b.WriteString(strings.Repeat("  ", min(l.Depth, 6)))
	b.WriteString(render.Line(l.From))
	if l.To != "" {
		b.WriteString(" → ")
		b.WriteString(render.Line(l.To))
	}
	if l.Text != "" {
		b.WriteString(": ")
		b.WriteString(render.Line(l.Text))
	}
	return b.String()
}
