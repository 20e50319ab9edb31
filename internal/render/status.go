package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// PrintTaskView writes pm status tk-...: the task and its health, its
// phases (the actor's own marked *), its agents and its pending requests.
func PrintTaskView(w io.Writer, v *task.View, h task.Health, reqs []*store.Request, actor store.Actor) {
	t := v.Task
	fmt.Fprintf(w, "%s %s  %s\n", t.ID, Line(t.Status), Line(t.Description))
	fmt.Fprintf(w, "  state %s\n", HealthLine(h))
	if h.Next != "" {
		fmt.Fprintf(w, "  next: %s\n", Line(h.Next))
	}
	fmt.Fprintf(w, "  owner @%s  runtime %s  depth %d\n", Line(t.Owner), Line(t.Runtime), t.Depth)
	if t.ParentID != "" {
		fmt.Fprintf(w, "  parent %s\n", Line(t.ParentID))
	}
	if len(t.BlockedBy) > 0 {
		fmt.Fprintf(w, "  blocked by %s\n", Line(strings.Join(t.BlockedBy, ", ")))
	}
	if len(t.Children) > 0 {
		fmt.Fprintf(w, "  subtasks %s\n", Line(strings.Join(t.Children, ", ")))
	}
	if t.Commit != "" {
		fmt.Fprintf(w, "  commit %s\n", Line(t.Commit))
	}
	for _, p := range v.Phases {
		mark := " "
		if actor.Agent != nil && actor.Agent.PhaseID == p.ID {
			mark = "*"
		}
		fmt.Fprintf(w, " %sphase %s\n", mark, PhaseLine(p.Phase, p.Messages))
	}
	for _, a := range v.Agents {
		fmt.Fprintf(w, "  agent @%s %s %s pid %d%s%s\n", Line(a.Name), Line(AgentRole(a)), Line(a.Status), a.Pid, AgentEnd(a), sandboxNote(a))
	}
	for _, r := range reqs {
		fmt.Fprintf(w, "  request %s from @%s: %s\n", Line(r.ID), Line(r.From), Line(r.Question))
	}
}

// HealthLine is a task's state with what explains it, in one line:
// "working: phase ph-... "Design" 3/10", "stalled: owner @x failed (exit 1)".
func HealthLine(h task.Health) string {
	if d := HealthDetail(h); d != "" {
		return string(h.State) + ": " + d
	}
	return string(h.State)
}

// HealthDetail is what explains a task's state ("" when nothing does).
func HealthDetail(h task.Health) string {
	var parts []string
	if h.Reason != "" {
		parts = append(parts, Line(h.Reason)+ExitSuffix(h.ExitCode))
	}
	if len(h.Requests) > 0 {
		parts = append(parts, "asked the human: "+Line(strings.Join(h.Requests, ", ")))
	}
	if len(h.Waiting) > 0 {
		on := "on "
		if h.State == task.StateWaitingKids {
			on = "on subtasks "
		}
		parts = append(parts, on+Line(strings.Join(h.Waiting, ", ")))
	}
	if h.Phase != nil {
		parts = append(parts, fmt.Sprintf("phase %s %q %d/%d", h.Phase.ID, Line(h.Phase.Name), h.Phase.Messages, h.Phase.Limit))
	}
	return strings.Join(parts, "; ")
}

// ExitSuffix is " (exit N)" for a recorded exit code, else "".
func ExitSuffix(code *int) string {
	if code == nil {
		return ""
	}
	return " (exit " + strconv.Itoa(*code) + ")"
}

// AgentRole is what an agent is to its task: owner, its phase role, or a
// resident prompt object (no task).
func AgentRole(a *store.Agent) string {
	switch {
	case a.Role != "":
		return a.Role
	case a.TaskID == "":
		return "resident"
	}
	return "owner"
}

// AgentEnd says how an ended agent ended: " exit 1: reason", or "".
func AgentEnd(a *store.Agent) string {
	s := ""
	if a.ExitCode != nil {
		s = " exit " + strconv.Itoa(*a.ExitCode)
	}
	if a.Reason != "" && a.Status != store.AgentRunning {
		s += ": " + Line(a.Reason)
	}
	return s
}

// PrintSummary writes pm status: one line per listed task with its state
// (and, under it, what explains it and the next step), then the counts.
func PrintSummary(w io.Writer, sum *task.Summary, health map[string]task.Health) {
	if sum.Total == 0 {
		fmt.Fprintln(w, "no tasks yet; start one with: pm task \"describe the work\"")
		return
	}
	cols := Width(w) // on a terminal, lines fit it
	width := 0       // owners line up, so the descriptions do
	for _, t := range sum.Tasks {
		width = max(width, len(Line(t.Owner))+2*t.Depth)
	}
	for _, t := range sum.Tasks {
		indent := strings.Repeat("  ", t.Depth)
		h, ok := health[t.ID]
		state := string(t.Status)
		if ok {
			state = string(h.State)
		}
		head := fmt.Sprintf("%s%s %-16s @%-*s  ", indent, Line(t.ID), Line(state), width-2*t.Depth, Line(t.Owner))
		fmt.Fprintf(w, "%s%s\n", head, fitTail(head, Line(t.Description), cols))
		if !ok {
			continue
		}
		if d := HealthDetail(h); d != "" {
			fmt.Fprintf(w, "%s    %s\n", indent, fitTail(indent+"    ", d, cols))
		}
		if h.Next != "" && h.State == task.StateStalled {
			fmt.Fprintf(w, "%s    next: %s\n", indent, Line(h.Next))
		}
	}
	var parts []string
	for _, k := range []store.TaskStatus{store.TaskActive, store.TaskBlocked, store.TaskDone, store.TaskKilled} {
		if sum.Counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum.Counts[k], k))
		}
	}
	fmt.Fprintf(w, "%s: %s\n", Plural(sum.Total, "task"), strings.Join(parts, ", "))
}

// Plural is "1 task", "3 tasks".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// sandboxNote says what confines an agent's commands: " sandbox landlock".
func sandboxNote(a *store.Agent) string {
	if a.Sandbox == "" {
		return ""
	}
	return " sandbox " + Line(a.Sandbox)
}
