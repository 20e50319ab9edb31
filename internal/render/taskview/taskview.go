package taskview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// PrintTaskView writes pm status tk-...: the task and its health, its
// phases (the actor's own marked *), its agents and its pending requests.
func PrintTaskView(w io.Writer, v *task.View, h task.Health, reqs []*store.Request, actor store.Actor) {
	t := v.Task
	fmt.Fprintf(w, "%s %s  %s\n", t.ID, render.Line(t.Status), render.Line(t.Description))
	fmt.Fprintf(w, "  state %s\n", HealthLine(h))
	if h.Next != "" {
		fmt.Fprintf(w, "  next: %s\n", render.Line(h.Next))
	}
	fmt.Fprintf(w, "  owner @%s  runtime %s  depth %d\n", render.Line(t.Owner), render.Line(t.Runtime), t.Depth)
	if t.ParentID != "" {
		fmt.Fprintf(w, "  parent %s\n", render.Line(t.ParentID))
	}
	if len(t.BlockedBy) > 0 {
		fmt.Fprintf(w, "  blocked by %s\n", render.Line(strings.Join(t.BlockedBy, ", ")))
	}
	if len(t.Children) > 0 {
		fmt.Fprintf(w, "  subtasks %s\n", render.Line(strings.Join(t.Children, ", ")))
	}
	if t.Commit != "" {
		fmt.Fprintf(w, "  commit %s\n", render.Line(t.Commit))
	}
	switch {
	case t.Worktree != nil:
		fmt.Fprintf(w, "  worktree %s on %s, merges into %s\n", render.Line(t.Worktree.Path),
			render.Line(strings.TrimPrefix(t.Worktree.Branch, "refs/heads/")), render.Line(t.IntoName()))
	case t.Repo == nil || t.Repo.WorkTree == "":
		fmt.Fprintln(w, "  no worktree: no git repository held the project when it was created")
	default:
		fmt.Fprintln(w, "  no worktree: it works in the checkout (isolation \"none\", runtime none, or a parent without one)")
	}
	for _, p := range v.Phases {
		mark := " "
		if actor.Agent != nil && actor.Agent.PhaseID == p.ID {
			mark = "*"
		}
		fmt.Fprintf(w, " %sphase %s%s\n", mark, render.PhaseLine(p.Phase, p.Messages), since(v.Now, p.LastActivity))
	}
	for _, a := range v.Agents {
		fmt.Fprintf(w, "  agent @%s %s %s pid %d%s%s%s\n", render.Line(a.Name), render.Line(render.AgentRole(a)), render.Line(a.Status), a.Pid, render.AgentEnd(a), render.SandboxNote(a), since(v.Now, v.AgentActivity[a.Name]))
	}
	for _, r := range reqs {
		fmt.Fprintf(w, "  request %s from @%s: %s\n", render.Line(r.ID), render.Line(r.From), render.Line(r.Question))
	}
}

// since is "  · last activity 3m ago" for a time the view read, "" for none.
func since(now, at time.Time) string {
	if at.IsZero() || now.IsZero() {
		return ""
	}
	return "  · last activity " + task.Ago(max(now.Sub(at), 0)) + " ago"
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
		parts = append(parts, render.Line(h.Reason)+render.ExitSuffix(h.ExitCode))
	}
	if len(h.Requests) > 0 {
		parts = append(parts, "asked the human: "+render.Line(strings.Join(h.Requests, ", ")))
	}
	if len(h.Waiting) > 0 {
		on := "on "
		if h.State == task.StateWaitingKids {
			on = "on subtasks "
		}
		parts = append(parts, on+render.Line(strings.Join(h.Waiting, ", ")))
	}
	if h.Phase != nil {
		parts = append(parts, fmt.Sprintf("phase %s %q %d/%d", h.Phase.ID, render.Line(h.Phase.Name), h.Phase.Messages, h.Phase.Limit))
	}
	if h.LastActivity != nil && h.State != task.StateIdle && h.State != task.StateStuck { // their reason says it
		parts = append(parts, "last activity "+task.Ago(time.Duration(h.IdleSeconds)*time.Second)+" ago")
	}
	return strings.Join(parts, "; ")
}

// PrintSummary writes pm status: one line per listed task with its state
// (and, under it, what explains it and the next step), then the counts.
func PrintSummary(w io.Writer, sum *task.Summary, health map[string]task.Health) {
	if sum.Total == 0 {
		fmt.Fprintln(w, "no tasks yet; start one with: pm task \"describe the work\"")
		return
	}
	cols := render.Width(w) // on a terminal, lines fit it
	width := 0              // owners line up, so the descriptions do
	for _, t := range sum.Tasks {
		width = max(width, len(render.Line(t.Owner))+2*t.Depth)
	}
	for _, t := range sum.Tasks {
		indent := strings.Repeat("  ", t.Depth)
		h, ok := health[t.ID]
		state := string(t.Status)
		if ok {
			state = string(h.State)
		}
		head := fmt.Sprintf("%s%s %-16s @%-*s  ", indent, render.Line(t.ID), render.Line(state), width-2*t.Depth, render.Line(t.Owner))
		fmt.Fprintf(w, "%s%s\n", head, render.FitTail(head, render.Line(t.Description), cols))
		if !ok {
			continue
		}
		if d := HealthDetail(h); d != "" {
			fmt.Fprintf(w, "%s    %s\n", indent, render.FitTail(indent+"    ", d, cols))
		}
		if h.Next != "" && (h.State == task.StateStalled || h.State == task.StateIdle || h.State == task.StateStuck) {
			fmt.Fprintf(w, "%s    next: %s\n", indent, render.Line(h.Next))
		}
	}
	var parts []string
	for _, k := range []store.TaskStatus{store.TaskActive, store.TaskBlocked, store.TaskDone, store.TaskKilled} {
		if sum.Counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum.Counts[k], k))
		}
	}
	fmt.Fprintf(w, "%s: %s\n", render.Plural(sum.Total, "task"), strings.Join(parts, ", "))
}

// PrintDone writes what pm done did: the commit (or why there is none) with
// the paths it holds, the files left out as secrets, and the dependants it
// unblocked.
func PrintDone(w io.Writer, t *store.Task, res *task.DoneResult) {
	fmt.Fprintf(w, "%s done\n", t.ID)
	switch {
	case res.Commit.NoRepo:
		fmt.Fprintln(w, "not a git repository: nothing committed")
	case res.Commit.NoChanges:
		fmt.Fprintln(w, "no changes: nothing committed")
	default:
		h := res.Commit.Hash
		if len(h) > 12 {
			h = h[:12]
		}
		fmt.Fprintf(w, "committed %s (%s): [plasmodium] %s: %s\n", h, render.Plural(res.Commit.Files, "file"), t.ID, render.Line(t.Description))
		for _, p := range res.Commit.Committed {
			fmt.Fprintf(w, "  %s\n", render.Line(p))
		}
	}
	for _, p := range res.Commit.Excluded {
		fmt.Fprintf(w, "left out %s: it looks like a secret (commit.exclude in config.json)\n", render.Line(p))
	}
	printMerge(w, t, res)
	for _, u := range res.Unblocked {
		fmt.Fprintf(w, "unblocked %s\n", u)
	}
}

// printMerge says where a task's branch went: merged (how, into what,
// which checkout's files changed), or held for review.
func printMerge(w io.Writer, t *store.Task, res *task.DoneResult) {
	if t.Worktree == nil {
		return
	}
	branch := strings.TrimPrefix(t.Worktree.Branch, "refs/heads/")
	into := t.IntoName()
	switch {
	case res.Held:
		fmt.Fprintf(w, "held for review on %s: pm diff %s, then pm merge %s or pm reject %s \"why\"\n", branch, t.ID, t.ID, t.ID)
	case res.Merge == nil || res.Merge.UpToDate || res.Merge.Hash == "":
		fmt.Fprintf(w, "nothing to merge into %s\n", into)
	default:
		how := "merged"
		if res.Merge.FastForward {
			how = "fast-forwarded"
		}
		h := res.Merge.Hash
		if len(h) > 12 {
			h = h[:12]
		}
		fmt.Fprintf(w, "%s %s into %s: %s (%s)\n", how, branch, into, h, render.Plural(len(res.Merge.Merged), "file"))
		if res.Merge.CheckedOut != "" {
			fmt.Fprintf(w, "updated those files in %s\n", render.Line(res.Merge.CheckedOut))
		}
		if t.Worktree.Remote != "" {
			fmt.Fprintf(w, "your checkout is not written: git pull to see it\n")
		}
	}
}
