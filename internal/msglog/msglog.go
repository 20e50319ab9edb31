package msglog

import (
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/render"
)

// Line is one line of the message log: who spoke to whom, and what.
type Line struct {
	Time  time.Time `json:"-"`
	From  string    `json:"from"`
	To    string    `json:"to,omitempty"`
	Text  string    `json:"text,omitempty"`
	Depth int       `json:"depth"` // how deep in the cascade started by the human
	// Primitive: the call is to (or the result from) a primitive tool, not
	// a prompt object.
	Primitive bool `json:"primitive,omitempty"`
}

// Cascade turns bus events into log lines, indenting each call under the
// call that caused it.
type Cascade struct {
	depth map[string]int
}

// NewCascade starts a log with everyone at depth 0.
func NewCascade() *Cascade { return &Cascade{depth: map[string]int{}} }

// Line is the log line for ev, or false when ev is not a message.
func (c *Cascade) Line(ev bus.Event) (Line, bool) {
	l := Line{Time: ev.Time}
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
		l.From, l.To, l.Text, l.Primitive = ev.Actor, tool, args, true
		l.Depth = c.depth[l.From]
	case bus.EvToolResult:
		tool, res, _ := strings.Cut(ev.Text, ": ")
		l.From, l.To, l.Text, l.Primitive = tool, ev.Actor, res, true
		l.Depth = c.depth[l.To]
	case bus.EvRequestAsked:
		l.From, l.To, l.Text = ev.Actor, "human", ev.Text
		l.Depth = c.depth[l.From]
	case bus.EvRequestAnswered:
		l.From, l.To, l.Text = ev.Actor, ev.Agent, ev.Text
		l.Depth = c.depth[l.To]
	case bus.EvCapabilityCreated:
		l.From, l.To, l.Text, l.Primitive = ev.Actor, "create_capability", ev.Text, true
		l.Depth = c.depth[l.From]
	default:
		return Line{}, false
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

// Format is the line as shown in a terminal: time, indent, from → to: text,
// all agent-written parts escaped to one line.
func (l Line) Format(loc *time.Location) string {
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
