package tui

import (
	"context"
	"testing"
	"time"
)

// A demo puts each line in the input in turn; when a line's reply ends the
// conversation moves to the object the line names, still marked new.
func TestDemoPlays(t *testing.T) {
	m := NewTalk(context.Background(), Backend{}, "coordinator", time.UTC).Play(&Demo{Banner: "demo 4", Lines: []DemoLine{
		{Say: "I need a Ruby specialist", Then: "ruby_debugger"},
		{Say: "lib/calc.rb"},
	}})
	if got := m.input.Value(); got != "I need a Ruby specialist" {
		t.Fatalf("input %q, want the first line", got)
	}
	m.input.SetValue("")
	m.fresh["ruby_debugger"] = true
	m.Update(replyMsg{po: "coordinator", reply: "made it"})
	if m.active != "ruby_debugger" || !m.fresh["ruby_debugger"] {
		t.Fatalf("active %q (new %v), want ruby_debugger still marked new", m.active, m.fresh["ruby_debugger"])
	}
	if got := m.input.Value(); got != "lib/calc.rb" {
		t.Fatalf("input %q, want the second line", got)
	}
	m.input.SetValue("")
	m.Update(replyMsg{po: "ruby_debugger", reply: "fixed"})
	if m.input.Value() != "" || m.status == "" {
		t.Fatalf("after the last line: input %q, status %q", m.input.Value(), m.status)
	}
}
