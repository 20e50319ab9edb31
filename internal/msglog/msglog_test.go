package msglog

import (
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
)

var t0 = time.Date(2026, 1, 2, 14, 23, 1, 0, time.UTC)

// seedEvents is the seed's message log: the human asks coord, coord asks
// reader, reader lists files, then coord creates a capability.
func seedEvents() []bus.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []bus.Event{
		{Time: at(0), Kind: bus.POKind("request"), Actor: "human", Agent: "coord", Text: "human → coord: help me understand this codebase"},
		{Time: at(1), Kind: bus.POKind("request"), Actor: "coord", Agent: "reader", Text: "coord → reader: list the files in root"},
		{Time: at(1), Kind: bus.EvToolCall, Actor: "reader", Text: `list_files {"path":"."}`},
		{Time: at(1), Kind: bus.EvToolResult, Actor: "reader", Text: "list_files: README.md\nlib/\nspec/"},
		{Time: at(2), Kind: bus.POKind("reply"), Actor: "reader", Agent: "coord", Text: "reader → coord: Found: README.md, lib/, spec/"},
		{Time: at(2), Kind: bus.EvMessage, Actor: "coord", Text: "not a log line"},
		{Time: at(3), Kind: bus.EvCapabilityCreated, Actor: "coord", Text: "spec_writer"},
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
		{"14:23:04    coord → create_capability: spec_writer", 1, true},
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

func TestFormatEscapes(t *testing.T) {
	l := Line{Time: t0, From: "reader", To: "human", Text: "\x1b[2Jgone"}
	if got := l.Format(time.UTC); !strings.HasSuffix(got, `reader → human: \x1b[2Jgone`) {
		t.Fatalf("got %q", got)
	}
}
