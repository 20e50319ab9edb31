package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/plasmodium/pm/internal/render"
)

var (
	titleStyle   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12"))
	sectionStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("8"))
	dimStyle     = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	youStyle     = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("10"))
	poStyle      = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("13"))
	errStyle     = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	capStyle     = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1).Align(lipgloss.Center)
	activeCap    = capStyle.BorderForeground(lipgloss.Color("13"))
	askStyle     = lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(lipgloss.Color("11")).Padding(0, 1)
)

// State marks of the capability bar, as in the seed.
const (
	markIdle      = "○"
	markWorking   = "◐"
	markActive    = "●"
	markPrimitive = "▪"
)

// View draws the screen: bar, log, conversation, request box, input.
func (m *Talk) View() string {
	w := max(m.width, 20)
	top := []string{m.header(w), m.bar(w), dimStyle.Render(clip("○ idle  ◐ working  ● active  ▪ primitive  ✦ new", w))}
	bottom := []string{}
	if len(m.pending) > 0 {
		bottom = append(bottom, m.askBox(w))
	}
	bottom = append(bottom, m.input.View(), m.statusLine(w))
	fixed := lipgloss.Height(strings.Join(top, "\n")) + lipgloss.Height(strings.Join(bottom, "\n")) + 2
	room := max(m.height-fixed, 2)
	logRows := max(room*2/5, 1)
	convRows := max(room-logRows, 1)
	mid := []string{
		sectionStyle.Render(rule("MESSAGE LOG", w)),
		m.logView(w, logRows-1),
		sectionStyle.Render(rule(strings.ToUpper(render.Line(m.active)), w)),
		m.convView(w, convRows-1),
	}
	return strings.Join(append(append(top, mid...), bottom...), "\n")
}

func (m *Talk) header(w int) string {
	title := "pm · PromptObjects environment"
	if m.demo != nil {
		title = "pm · " + m.demo.Banner
	}
	left := titleStyle.Render(title)
	right := dimStyle.Render("talking with " + render.Line(m.active))
	gap := max(w-lipgloss.Width(left)-lipgloss.Width(right), 1)
	return left + strings.Repeat(" ", gap) + right
}

// bar is the capability bar: a box per prompt object with its state, then
// the primitives.
func (m *Talk) bar(w int) string {
	var boxes []string
	for _, po := range m.pos {
		mark, st := markIdle, capStyle
		switch {
		case po == m.active:
			mark, st = markActive, activeCap
		case m.working[po]:
			mark = markWorking
		}
		name := render.Line(po)
		if m.fresh[po] {
			name = "✦ " + name
		}
		boxes = append(boxes, st.Render(name+"\n"+mark))
	}
	if len(m.prims) > 0 {
		boxes = append(boxes, dimStyle.Render("│\n│\n│\n│"))
	}
	for _, p := range m.prims {
		boxes = append(boxes, capStyle.Render(render.Line(p)+"\n"+markPrimitive))
	}
	row := lipgloss.JoinHorizontal(lipgloss.Top, boxes...)
	lines := strings.Split(row, "\n")
	for i, l := range lines {
		lines[i] = clip(l, w)
	}
	return strings.Join(lines, "\n")
}

func (m *Talk) logView(w, rows int) string {
	start := max(len(m.log)-rows, 0)
	out := make([]string, 0, rows)
	for _, l := range m.log[start:] {
		out = append(out, clip(l.Format(m.loc), w))
	}
	return pad(out, rows)
}

func (m *Talk) convView(w, rows int) string {
	var out []string
	for _, t := range m.convs[m.active] {
		who := youStyle.Render(render.Line(t.Who))
		if t.Reply {
			who = poStyle.Render(render.Line(t.Who))
		}
		out = append(out, who)
		text := ansi.Wrap(render.Terminal(t.Text), w-2, " ")
		if t.Reply {
			text = renderMarkdown(render.Terminal(t.Text), w-2) // escaped first: see renderMarkdown
		}
		for _, l := range strings.Split(text, "\n") {
			out = append(out, "  "+l)
		}
	}
	if m.busy {
		out = append(out, dimStyle.Render("  …"))
	}
	return pad(out[max(len(out)-rows, 0):], rows)
}

// askBox shows the oldest pending request and how to answer it.
func (m *Talk) askBox(w int) string {
	r := m.pending[0]
	q := ansi.Wrap(render.Terminal(r.Question), w-6, " ")
	more := ""
	if len(m.pending) > 1 {
		more = fmt.Sprintf(" (+%d more)", len(m.pending)-1)
	}
	help := dimStyle.Render("[y] yes  [n] no  or type an answer and press Enter")
	return askStyle.Width(w - 2).Render(fmt.Sprintf("%s asks%s (%s):\n%s\n%s", render.Line(r.From), more, r.ID, q, help))
}

func (m *Talk) statusLine(w int) string {
	if !m.input.Focused() { // after Esc: how to leave comes first
		return dimStyle.Render(clip("q leave · any other key types · Tab switch object", w))
	}
	if m.status != "" {
		return errStyle.Render(clip(render.Line(m.status), w))
	}
	return dimStyle.Render(clip("Enter send · ↑↓ history · Tab switch object · Esc q or Ctrl-C leave", w))
}

// rule is a section title followed by a line to the edge.
func rule(title string, w int) string {
	return clip(title+" "+strings.Repeat("─", max(w-len([]rune(title))-1, 0)), w)
}

func clip(s string, w int) string { return ansi.Truncate(s, w, "…") }

// pad makes lines exactly rows long so the layout does not jump.
func pad(lines []string, rows int) string {
	for len(lines) < rows {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
