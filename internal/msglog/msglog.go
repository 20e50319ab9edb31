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

// Cascade turns bus events into log lines, indenting each under the call
// that caused it, from the ids the events carry (never from timing or
// names): an inbox request's bus.POMessage has its call id (Corr) and the
// call its sender was answering (Cause); a tool call or result, or a
// question to the human, carries the call it was made in as Cause. A call is
// one level under its cause, what happens in a call one level under the
// call, and a reply at its call's level. An event whose cause is unknown (no
// id, or the call began before the log did) is at the top.
//
// It keeps the most recent maxOpenCalls open calls and questions: one whose
// reply never comes (its callee died) is forgotten once that many newer ones
// opened, and what it caused is then shown at the top.
type Cascade struct {
	level map[string]int // open calls and unanswered questions -> their level
	order []string       // their ids, oldest first (ids already closed are skipped)
}

// maxOpenCalls bounds what a cascade that follows the bus for days keeps.
const maxOpenCalls = 4096

// open records that call id is open at level.
func (c *Cascade) open(id string, level int) {
	if _, ok := c.level[id]; !ok {
		c.order = append(c.order, id)
	}
	c.level[id] = level
	for len(c.level) > maxOpenCalls {
		oldest := c.order[0]
		c.order = c.order[1:]
		delete(c.level, oldest)
	}
	if len(c.order) > 2*maxOpenCalls+64 { // mostly closed ids: keep the open ones only
		kept := make([]string, 0, len(c.level))
		for _, id := range c.order {
			if _, ok := c.level[id]; ok {
				kept = append(kept, id)
			}
		}
		c.order = kept
	}
}

// NewCascade starts a log with no call open.
func NewCascade() *Cascade { return &Cascade{level: map[string]int{}} }

// under is the level of what happens in call cause.
func (c *Cascade) under(cause string) int {
	if l, ok := c.level[cause]; ok && cause != "" {
		return l + 1
	}
	return 0
}

// Line is the log line for ev, or false when ev is not a message.
func (c *Cascade) Line(ev bus.Event) (Line, bool) {
	l := Line{Time: ev.Time}
	switch ev.Kind {
	case bus.POKind("request"), bus.POKind("notice"):
		d, _ := ev.Data.(bus.POMessage)
		l.From, l.To, l.Text = ev.Actor, ev.Agent, body(ev)
		l.Depth = c.under(d.Cause)
		if d.Corr != "" {
			c.open(d.Corr, l.Depth)
		}
	case bus.POKind("reply"):
		d, _ := ev.Data.(bus.POMessage)
		l.From, l.To, l.Text = ev.Actor, ev.Agent, body(ev)
		l.Depth = c.level[d.Corr]
		delete(c.level, d.Corr) // the call is over
	case bus.EvToolCall:
		d, _ := ev.Data.(bus.ToolCall)
		if d.Message {
			return Line{}, false // a call to an object or the human: its messages are the lines
		}
		tool, args, _ := strings.Cut(ev.Text, " ")
		l.From, l.To, l.Text, l.Primitive = ev.Actor, tool, args, true
		l.Depth = c.under(d.Cause)
	case bus.EvToolResult:
		d, _ := ev.Data.(bus.ToolResult)
		if d.Message {
			return Line{}, false
		}
		tool, res, _ := strings.Cut(ev.Text, ": ")
		l.From, l.To, l.Text, l.Primitive = tool, ev.Actor, res, true
		l.Depth = c.under(d.Cause)
	case bus.EvRequestAsked:
		d, _ := ev.Data.(bus.RequestAsked)
		l.From, l.To, l.Text = ev.Actor, "human", ev.Text
		l.Depth = c.under(d.Cause)
		c.open("?"+d.Request, l.Depth)
	case bus.EvRequestAnswered:
		d, _ := ev.Data.(bus.RequestAnswered)
		q := "?" + d.Request
		l.From, l.To, l.Text = ev.Actor, ev.Agent, ev.Text
		l.Depth = c.level[q]
		delete(c.level, q)
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
