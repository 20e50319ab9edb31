package tui

import (
	"context"
	"io"
	"slices"

	tea "github.com/charmbracelet/bubbletea"
)

// Demo is a scripted conversation played in pm talk (pm demo --talk): the
// next line waits in the input for the presenter to send with Enter (or to
// change first); the questions are answered with a key as usual.
type Demo struct {
	Banner string // shown in the header, e.g. "[replay] demo 2 · Semantic Binding"
	Lines  []DemoLine
}

// DemoLine is one line the human says, and the object the conversation
// moves to once it is answered ("" stays).
type DemoLine struct {
	Say  string
	Then string
}

// RunDemo runs pm talk on the terminal with d's lines ready to send.
func RunDemo(ctx context.Context, be Backend, po string, d *Demo, in io.Reader, out io.Writer) error {
	return runProgram(ctx, in, out, func(ctx context.Context) tea.Model { return NewTalk(ctx, be, po, nil).Play(d) })
}

// Play makes m play d: its first line is put in the input.
func (m *Talk) Play(d *Demo) *Talk {
	m.demo = d
	m.prefill()
	return m
}

// prefill puts the demo's next line in an empty input.
func (m *Talk) prefill() {
	if m.demo == nil || m.demoAt >= len(m.demo.Lines) || m.input.Value() != "" {
		return
	}
	m.input.SetValue(m.demo.Lines[m.demoAt].Say)
	m.input.CursorEnd()
}

// demoReplied moves the demo on once a reply ends: to the object the line
// names (one just created, in demo 4), then to the next line.
func (m *Talk) demoReplied() tea.Cmd {
	if m.demo == nil || m.demoAt >= len(m.demo.Lines) {
		return nil
	}
	then := m.demo.Lines[m.demoAt].Then
	m.demoAt++
	var cmd tea.Cmd
	if then != "" {
		if !slices.Contains(m.pos, then) {
			m.pos = append(m.pos, then)
		}
		m.active = then // still marked new in the bar, as the seed shows it
		cmd = m.loadConversation(then)
	}
	if m.demoAt == len(m.demo.Lines) {
		m.status = "end of the demo: talk on, or Esc q to leave"
	}
	m.prefill()
	return cmd
}
