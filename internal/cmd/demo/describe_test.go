package demo

import (
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/bus"
)

// pm demo prints the bus as the flow runs; with a live model (--live, or a
// provider in the environment) the messages and tool calls are model text:
// no escape sequence or line break of theirs may reach the terminal raw.
func TestDescribeEscapesModelText(t *testing.T) {
	hostile := "hi\x1b[2J\x1b]0;owned\x07\nfake line\r"
	for _, ev := range []bus.Event{
		{Kind: bus.EvMessage, Actor: "oak\x1b[31m", Text: hostile},
		{Kind: bus.EvToolCall, Actor: "oak", Text: "write_file " + hostile},
		{Kind: bus.EvPhaseOpened, PhaseID: "ph-a1b2c3", Text: hostile, Data: bus.PhaseOpened{Limit: 3, Roles: []string{"qa\x1b[1m"}}},
		{Kind: bus.EvCommit, Text: hostile},
	} {
		line := describe(ev)
		if strings.ContainsAny(line, "\x1b\x07\n\r") {
			t.Errorf("describe(%s) = %q: control characters reach the terminal", ev.Kind, line)
		}
	}
}
