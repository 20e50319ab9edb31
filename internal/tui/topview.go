package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/render/taskview"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// View draws the title, the panels and the footer in the terminal's rows:
// the panels share what the title, their rules and the footer leave
// (sectionRows), the selected task stays in view, the bus tail takes the
// rest. Enter's task view replaces the panels.
func (m *Top) View() string {
	w := max(m.width, 20)
	var out []string
	add := func(lines ...string) {
		for _, l := range lines {
			out = append(out, clip(l, w))
		}
	}
	if m.detail != nil {
		return m.detailView(w)
	}
	add(titleStyle.Render("pm top") + dimStyle.Render("  "+strings.Join([]string{render.Plural(len(m.data.Tasks), "task"),
		render.Plural(len(m.data.Rooms), "room"), render.Plural(len(m.data.Agents), "agent"), render.Plural(len(m.data.Requests), "request")}, " · ")))
	foot := strings.Split(strings.Join(m.footer(w), "\n"), "\n") // a confirmation box is one string of lines
	sections := []struct {
		name  string
		lines []string
		focus int
	}{{"TASKS", m.taskLines(), m.sel}, {"ROOMS", m.roomLines(), 0}, {"AGENTS", m.agentLines(), 0}, {"NEEDS YOU", m.needLines(), m.nsel}}
	want := make([]int, len(sections))
	for i, sec := range sections {
		want[i] = len(sec.lines)
	}
	rows := sectionRows(m.height-len(out)-len(foot)-len(sections)-1, busMin(m.height), want)
	for i, sec := range sections {
		add(sectionStyle.Render(rule(sec.name, w)))
		add(window(sec.lines, rows[i], sec.focus)...)
	}
	add(sectionStyle.Render(rule("BUS", w)))
	left := max(m.height-len(out)-len(foot), 0)
	add(m.tail[max(len(m.tail)-left, 0):]...)
	for len(out) < m.height-len(foot) {
		out = append(out, "")
	}
	return strings.Join(append(out, foot...), "\n")
}

func (m *Top) taskLines() []string {
	var l []string
	for i, t := range m.data.Tasks {
		mark := "  "
		if i == m.sel {
			mark = "▸ "
		}
		line := fmt.Sprintf("%s%s%s %-8s %s", mark, strings.Repeat("  ", t.Depth), t.ID, t.Status, render.Line(t.Description))
		if h, ok := m.data.Health[t.ID]; ok && h.State != task.StateDone && h.State != task.StateKilled {
			line += dimStyle.Render("  · " + taskview.HealthLine(h)) // working, stalled, waiting, ... and why
		}
		l = append(l, line)
	}
	return l
}

func (m *Top) roomLines() []string {
	var l []string
	for _, r := range m.data.Rooms {
		l = append(l, fmt.Sprintf("  %s %s  %d/%d  %s%s", r.Phase.ID, render.Line(r.Phase.Name), r.Count, r.Phase.MessageLimit, r.Phase.TaskID, m.ago(r.LastActivity)))
		for _, msg := range r.Last {
			l = append(l, fmt.Sprintf("      @%s: %s", render.Line(msg.Author), render.Line(msg.Content)))
		}
	}
	return l
}

func (m *Top) agentLines() []string {
	var l []string
	for _, a := range m.data.Agents {
		l = append(l, agentLine(a)+m.ago(m.data.AgentActivity[a.Name])+m.agentCost(a))
	}
	if p := m.projectCost(); p != "" {
		l = append(l, p)
	}
	return l
}

// needLines are NEEDS YOU's items, the selected one marked while the
// panel has the keys.
func (m *Top) needLines() []string {
	var l []string
	for i, it := range m.needs() {
		mark := "  "
		if m.needsFocus && i == m.nsel {
			mark = "▸ "
		}
		if r := it.req; r != nil {
			l = append(l, fmt.Sprintf("%s%s %s asks: %s", mark, r.ID, render.Line(r.From), render.Line(r.Question)))
			continue
		}
		a := it.agent
		line := fmt.Sprintf("%s@%s %s", mark, render.Line(a.Name), a.Status)
		if a.TaskID != "" {
			line += " on " + a.TaskID
		}
		if a.Reason != "" {
			line += ": " + render.Line(a.Reason)
		}
		l = append(l, line)
	}
	return l
}

// detailView is Enter's view of one task: what pm status tk-.. prints and
// its last events, scrolled with ↑↓.
func (m *Top) detailView(w int) string {
	head := clip(titleStyle.Render("pm top › "+m.detailID), w)
	foot := dimStyle.Render(clip("↑↓ scroll · esc back · q leave", w))
	rows := max(m.height-2, 1)
	m.detailTop = min(m.detailTop, max(len(m.detail)-rows, 0))
	out := []string{head}
	for _, l := range m.detail[m.detailTop:min(m.detailTop+rows, len(m.detail))] {
		out = append(out, clip(l, w))
	}
	for len(out) < m.height-1 {
		out = append(out, "")
	}
	return strings.Join(append(out, foot), "\n")
}

// ago is "  · 3m ago": how long since at, by the snapshot's clock.
func (m *Top) ago(at time.Time) string {
	if at.IsZero() || m.data.Now.IsZero() {
		return ""
	}
	return "  · " + task.Ago(max(m.data.Now.Sub(at), 0)) + " ago"
}

func agentLine(a *store.Agent) string {
	return fmt.Sprintf("  %-14s %-8s %-7s restarts %d · %d turns %d tools %d tokens", render.Line(a.Name), a.Status, a.Runtime,
		a.Restarts, a.Usage.Turns, a.Usage.ToolCalls, a.Usage.Tokens)
}

func (m *Top) footer(w int) []string {
	var l []string
	switch {
	case m.asking && m.answering != nil:
		l = append(l, clip(fmt.Sprintf("%s asks: %s", render.Line(m.answering.From), render.Line(m.answering.Question)), w), m.input.View())
	case m.confirm != "":
		l = append(l, askStyle.Render(m.confirm))
	case m.status != "":
		l = append(l, errStyle.Render(clip(render.Line(m.status), w)))
	}
	return append(l, dimStyle.Render(clip(m.keysHint(), w)))
}

// keysHint names the keys that act now: on the selected task, or on NEEDS
// YOU's selected item (only what applies to it).
func (m *Top) keysHint() string {
	if !m.needsFocus {
		hint := "↑↓ task · enter open · e end phase · k kill · r restart · a answer"
		if len(m.needs()) > 0 {
			hint += " · tab needs you"
		}
		return hint + " · q leave"
	}
	hint := "↑↓ item"
	if items := m.needs(); m.nsel < len(items) {
		switch it := items[m.nsel]; {
		case m.gaveUp(it.req):
			hint += " · a answer · t try again · k kill · r restart"
		case it.req != nil:
			hint += " · a answer"
		default:
			hint += " · d dismiss"
		}
	}
	return hint + " · tab tasks · q leave"
}
