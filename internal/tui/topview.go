package tui

import (
	"fmt"
	"strings"

	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/render/taskview"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// View draws the panels top to bottom, each clipped to the width; the bus
// tail takes the rows left.
func (m *Top) View() string {
	w := max(m.width, 20)
	var out []string
	add := func(lines ...string) {
		for _, l := range lines {
			out = append(out, clip(l, w))
		}
	}
	add(titleStyle.Render("pm top") + dimStyle.Render("  "+strings.Join([]string{render.Plural(len(m.data.Tasks), "task"),
		render.Plural(len(m.data.Rooms), "room"), render.Plural(len(m.data.Agents), "agent"), render.Plural(len(m.data.Requests), "request")}, " · ")))
	add(sectionStyle.Render(rule("TASKS", w)))
	for i, t := range m.data.Tasks {
		mark := "  "
		if i == m.sel {
			mark = "▸ "
		}
		line := fmt.Sprintf("%s%s%s %-8s %s", mark, strings.Repeat("  ", t.Depth), t.ID, t.Status, render.Line(t.Description))
		if h, ok := m.data.Health[t.ID]; ok && h.State != task.StateDone && h.State != task.StateKilled {
			line += dimStyle.Render("  · " + taskview.HealthLine(h)) // working, stalled, waiting, ... and why
		}
		add(line)
	}
	add(sectionStyle.Render(rule("ROOMS", w)))
	for _, r := range m.data.Rooms {
		add(fmt.Sprintf("  %s %s  %d/%d  %s", r.Phase.ID, render.Line(r.Phase.Name), r.Count, r.Phase.MessageLimit, r.Phase.TaskID))
		for _, msg := range r.Last {
			add(fmt.Sprintf("      @%s: %s", render.Line(msg.Author), render.Line(msg.Content)))
		}
	}
	add(sectionStyle.Render(rule("AGENTS", w)))
	for _, a := range m.data.Agents {
		add(agentLine(a))
	}
	add(sectionStyle.Render(rule("REQUESTS", w)))
	for _, r := range m.data.Requests {
		add(fmt.Sprintf("  %s %s asks: %s", r.ID, render.Line(r.From), render.Line(r.Question)))
	}
	foot := m.footer(w)
	add(sectionStyle.Render(rule("BUS", w)))
	rows := max(m.height-len(out)-len(foot), 0)
	add(m.tail[max(len(m.tail)-rows, 0):]...)
	for len(out) < m.height-len(foot) {
		out = append(out, "")
	}
	return strings.Join(append(out, foot...), "\n")
}

func agentLine(a *store.Agent) string {
	return fmt.Sprintf("  %-14s %-8s %-7s restarts %d · %d turns %d tools %d tokens", render.Line(a.Name), a.Status, a.Runtime,
		a.Restarts, a.Usage.Turns, a.Usage.ToolCalls, a.Usage.Tokens)
}

func (m *Top) footer(w int) []string {
	var l []string
	switch {
	case m.asking:
		l = append(l, clip(fmt.Sprintf("%s asks: %s", render.Line(m.data.Requests[0].From), render.Line(m.data.Requests[0].Question)), w), m.input.View())
	case m.confirm != "":
		l = append(l, askStyle.Render(m.confirm))
	case m.status != "":
		l = append(l, errStyle.Render(clip(render.Line(m.status), w)))
	}
	return append(l, dimStyle.Render(clip("↑↓ task · e end phase · k kill · r restart · a answer · q leave", w)))
}
