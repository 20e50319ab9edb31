package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
)

func TestCascadeLines(t *testing.T) {
	c := newCascade()
	var got []string
	for _, ev := range cascadeEvents() {
		if l, ok := c.line(ev); ok {
			got = append(got, l.Format(time.UTC))
		}
	}
	want := []string{
		"14:23:01  human → coord: help me understand this codebase",
		"14:23:02    coord → reader: list the files in root",
		`14:23:02      reader → list_files: {"path":"."}`,
		`14:23:02      list_files → reader: README.md\nlib/\nspec/`,
		"14:23:03    reader → coord: Found: README.md, lib/, spec/",
		`14:23:04    coord → create_capability: {"name":"spec_writer"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLogLineEscapes(t *testing.T) {
	l := LogLine{Time: t0, From: "reader", To: "human", Text: "\x1b[2Jgone"}
	if got := l.Format(time.UTC); got != `14:23:01  reader → human: \x1b[2Jgone` {
		t.Fatalf("got %q", got)
	}
}

func TestUseTUI(t *testing.T) {
	env := func(term string) func(string) string { return func(string) string { return term } }
	for _, tc := range []struct {
		name  string
		term  string
		plain bool
	}{{"not a terminal", "xterm", false}, {"plain", "xterm", true}, {"dumb", "dumb", false}} {
		if UseTUI(strings.NewReader(""), &strings.Builder{}, env(tc.term), tc.plain) {
			t.Errorf("%s: TUI chosen, want line mode", tc.name)
		}
	}
}

// The nesting comes from the ids alone: a question to the human sits in
// the call it was asked in, its answer beside it; a call whose start was
// never seen, and an event with no ids, are at the top.
func TestCascadeByIDs(t *testing.T) {
	ev := func(kind bus.Kind, actor, agent, text string, data map[string]any) bus.Event {
		return bus.Event{Time: t0, Kind: kind, Actor: actor, Agent: agent, Text: text, Data: data}
	}
	req, reply := bus.POKind("request"), bus.POKind("reply")
	c := newCascade()
	var got []int
	for _, e := range []bus.Event{
		ev(req, "human", "coord", "human → coord: go", map[string]any{"corr": "c1"}),
		ev(req, "coord", "reader", "coord → reader: look", map[string]any{"corr": "c2", "cause": "c1"}),
		ev(req, "reader", "greeter", "reader → greeter: hi", map[string]any{"corr": "c3", "cause": "c2"}),
		ev(bus.EvRequestAsked, "greeter", "greeter", "ok?", map[string]any{"request": "rq-1", "cause": "c3"}),
		ev(bus.EvRequestAnswered, "human", "greeter", "yes", map[string]any{"request": "rq-1"}),
		ev(reply, "greeter", "reader", "greeter → reader: hello", map[string]any{"corr": "c3"}),
		ev(bus.EvToolCall, "reader", "", "read_file {}", map[string]any{"cause": "c2"}),
		ev(reply, "reader", "coord", "reader → coord: done", map[string]any{"corr": "c2"}),
		ev(bus.EvToolCall, "reader", "", "read_file {}", map[string]any{"cause": "c2"}), // c2 is over
		ev(bus.EvToolCall, "coord", "", "list_files {}", map[string]any{"cause": "c0"}), // never seen
		ev(bus.EvToolCall, "owner", "", "say {}", nil),
		ev(reply, "coord", "human", "coord → human: all done", map[string]any{"corr": "c1"}),
	} {
		l, ok := c.line(e)
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
	c := newCascade()
	for _, kind := range []bus.Kind{bus.EvToolCall, bus.EvToolResult} {
		ev := bus.Event{Time: t0, Kind: kind, Actor: "coord", Text: `reader {"message":"hi"}`, Data: map[string]any{"message": true}}
		if l, ok := c.line(ev); ok {
			t.Fatalf("%s: line %q, want none", kind, l.Format(time.UTC))
		}
	}
}
