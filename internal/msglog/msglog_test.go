package msglog

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
)

var t0 = time.Date(2026, 1, 2, 14, 23, 1, 0, time.UTC)

// seedEvents is the seed's message log: the human asks coord, coord asks
// reader, reader lists files, then coord creates a capability; each event
// carries the ids of the call it belongs to.
func seedEvents() []bus.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	in := func(cause string) bus.ToolCall { return bus.ToolCall{Cause: cause} }
	out := func(cause string) bus.ToolResult { return bus.ToolResult{Cause: cause} }
	return []bus.Event{
		{Time: at(0), Kind: bus.POKind("request"), Actor: "human", Agent: "coord", Text: "human → coord: help me understand this codebase", Data: bus.POMessage{Corr: "c1"}},
		{Time: at(1), Kind: bus.POKind("request"), Actor: "coord", Agent: "reader", Text: "coord → reader: list the files in root", Data: bus.POMessage{Corr: "c2", Cause: "c1"}},
		{Time: at(1), Kind: bus.EvToolCall, Actor: "reader", Text: `list_files {"path":"."}`, Data: in("c2")},
		{Time: at(1), Kind: bus.EvToolResult, Actor: "reader", Text: "list_files: README.md\nlib/\nspec/", Data: out("c2")},
		{Time: at(2), Kind: bus.POKind("reply"), Actor: "reader", Agent: "coord", Text: "reader → coord: Found: README.md, lib/, spec/", Data: bus.POMessage{Corr: "c2"}},
		{Time: at(2), Kind: bus.EvMessage, Actor: "coord", Text: "not a log line"},
		{Time: at(3), Kind: bus.EvToolCall, Actor: "coord", Text: `create_capability {"name":"spec_writer"}`, Data: in("c1")},
		{Time: at(3), Kind: bus.EvCapabilityCreated, Actor: "coord", Text: "spec_writer"}, // shown by the tool call
	}
}

func TestCascade(t *testing.T) {
	c := NewCascade()
	type row struct {
		text      string
		depth     int
		primitive bool
	}
	var got []row
	for _, ev := range seedEvents() {
		if l, ok := c.Line(ev); ok {
			got = append(got, row{l.Format(time.UTC), l.Depth, l.Primitive})
		}
	}
	want := []row{
		{"14:23:01  human → coord: help me understand this codebase", 0, false},
		{"14:23:02    coord → reader: list the files in root", 1, false},
		{`14:23:02      reader → list_files: {"path":"."}`, 2, true},
		{`14:23:02      list_files → reader: README.md\nlib/\nspec/`, 2, true},
		{"14:23:03    reader → coord: Found: README.md, lib/, spec/", 1, false},
		{`14:23:04    coord → create_capability: {"name":"spec_writer"}`, 1, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// The nesting comes from the ids alone: a question to the human sits in
// the call it was asked in, its answer beside it; a call whose start was
// never seen, and an event with no ids, are at the top.
func TestCascadeByIDs(t *testing.T) {
	ev := func(kind bus.Kind, actor, agent, text string, data bus.Payload) bus.Event {
		return bus.Event{Time: t0, Kind: kind, Actor: actor, Agent: agent, Text: text, Data: data}
	}
	req, reply := bus.POKind("request"), bus.POKind("reply")
	c := NewCascade()
	var got []int
	for _, e := range []bus.Event{
		ev(req, "human", "coord", "human → coord: go", bus.POMessage{Corr: "c1"}),
		ev(req, "coord", "reader", "coord → reader: look", bus.POMessage{Corr: "c2", Cause: "c1"}),
		ev(req, "reader", "greeter", "reader → greeter: hi", bus.POMessage{Corr: "c3", Cause: "c2"}),
		ev(bus.EvRequestAsked, "greeter", "greeter", "ok?", bus.RequestAsked{Request: "rq-1", Cause: "c3"}),
		ev(bus.EvRequestAnswered, "human", "greeter", "yes", bus.RequestAnswered{Request: "rq-1"}),
		ev(reply, "greeter", "reader", "greeter → reader: hello", bus.POMessage{Corr: "c3"}),
		ev(bus.EvToolCall, "reader", "", "read_file {}", bus.ToolCall{Cause: "c2"}),
		ev(reply, "reader", "coord", "reader → coord: done", bus.POMessage{Corr: "c2"}),
		ev(bus.EvToolCall, "reader", "", "read_file {}", bus.ToolCall{Cause: "c2"}), // c2 is over
		ev(bus.EvToolCall, "coord", "", "list_files {}", bus.ToolCall{Cause: "c0"}), // never seen
		ev(bus.EvToolCall, "owner", "", "say {}", nil),
		ev(reply, "coord", "human", "coord → human: all done", bus.POMessage{Corr: "c1"}),
	} {
		l, ok := c.Line(e)
		if !ok {
			t.Fatalf("%v: no line", e.Kind)
		}
		got = append(got, l.Depth)
	}
	want := []int{0, 1, 2, 3, 3, 2, 2, 1, 0, 0, 0, 0}
	if !slices.Equal(got, want) {
		t.Fatalf("depths %v, want %v", got, want)
	}
	if len(c.level) != 0 {
		t.Fatalf("levels left after every call ended: %v", c.level)
	}
}

// A tool call that is itself a message (a call to an object, ask_human) is
// shown once, by its messages: its tool events make no line.
func TestCascadeSkipsMessagingTools(t *testing.T) {
	c := NewCascade()
	for kind, data := range map[bus.Kind]bus.Payload{bus.EvToolCall: bus.ToolCall{Message: true}, bus.EvToolResult: bus.ToolResult{Message: true}} {
		ev := bus.Event{Time: t0, Kind: kind, Actor: "coord", Text: `reader {"message":"hi"}`, Data: data}
		if l, ok := c.Line(ev); ok {
			t.Fatalf("%s: line %q, want none", kind, l.Format(time.UTC))
		}
	}
}

func TestFormatEscapes(t *testing.T) {
	l := Line{Time: t0, From: "reader", To: "human", Text: "\x1b[2Jgone"}
	if got := l.Format(time.UTC); !strings.HasSuffix(got, `reader → human: \x1b[2Jgone`) {
		t.Fatalf("got %q", got)
	}
}
