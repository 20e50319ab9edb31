// Package agents implements `pm agents`.
package agents

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// Options are the inputs of pm agents.
type Options struct {
	All  bool
	JSON bool
	Wide bool
}

// NewCmd builds `pm agents`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "agents",
		Short: "List agents with pid, state and restarts",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVarP(&o.All, "all", "a", false, "include agents that have ended")
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	c.Flags().BoolVar(&o.Wide, "wide", false, "print every column whole (on a terminal the widest are cut to fit)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.Agents(f.Context, sess, ops.AgentsInput{All: o.All})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res.Agents)
	}
	if len(res.Agents) == 0 {
		fmt.Fprintf(f.IO.Out, "no agents running%s\n", hiddenNote(res.Hidden))
		return nil
	}
	last := map[string]time.Time{}
	noKernel, rulesOnly := false, false
	for _, a := range res.Agents {
		last[a.Name] = task.AgentLastActivity(sess.Store, a)
		noKernel = noKernel || a.Sandbox == agent.SandboxNoKernel
		rulesOnly = rulesOnly || a.Sandbox == string(sandbox.ModeLandlock)
	}
	tb := table(res.Agents, last, f.Now(), render.Width(f.IO.Out), o.Wide)
	if err := tb.Write(f.IO.Out); err != nil {
		return err
	}
	if len(tb.Dropped) > 0 {
		fmt.Fprintf(f.IO.Out, "(%s left out to fit: pm agents --wide shows every column)\n", strings.Join(tb.Dropped, ", "))
	}
	if noKernel {
		fmt.Fprintln(f.IO.Out, "note: this kernel has no Landlock: agents' commands run with pm's file rules only (docs/security.md)")
	}
	if rulesOnly {
		fmt.Fprintln(f.IO.Out, "note: landlock without a mount namespace: agents' commands cannot create files at the top of the project, and can list the names in .plasmodium/ (pm doctor says why)")
	}
	if res.Hidden > 0 {
		fmt.Fprintf(f.IO.Out, "%s hidden (exited or killed): pm agents --all shows them\n", render.Plural(res.Hidden, "ended agent"))
	}
	return nil
}

// table is pm agents' table. LAST is when the agent last did something
// (task.AgentLastActivity, as pm status derives it) and an llm agent's
// state. Ids and numbers are never cut; on a terminal too narrow for every
// column, CODE-DESIGNER, CONTAINMENT, RESTARTS and SANDBOX are left out in
// that order (a note says so) before the rest are cut. Records can be
// hand-edited: the table makes every cell safe.
func table(agents []*store.Agent, last map[string]time.Time, now time.Time, width int, wide bool) *render.Table {
	tb := &render.Table{Header: []string{"NAME", "ROLE", "TASK", "PHASE", "RUNTIME", "STATUS", "PID", "RESTARTS", "LAST", "CONTAINMENT", "CODE-DESIGNER", "SANDBOX"},
		Width: width, Wide: wide, Whole: []int{0, 2, 3, 6, 8}, Drop: []int{10, 9, 7, 11}}
	for _, a := range agents {
		tb.Add(a.Name, render.AgentRole(a), dash(a.TaskID), dash(a.PhaseID), string(a.Runtime), status(a), strconv.Itoa(a.Pid), strconv.Itoa(a.Restarts),
			lastActivity(a, last[a.Name], now), dash(a.Containment), a.CodeDesigner.String(), dash(a.Sandbox))
	}
	return tb
}

// status is the agent's status with how it ended: "failed (exit 1: crash loop)".
func status(a *store.Agent) string {
	end := strings.TrimPrefix(render.AgentEnd(a), " ")
	if end == "" || a.Status == store.AgentRunning || a.Status == store.AgentPending {
		return string(a.Status)
	}
	return string(a.Status) + " (" + end + ")"
}

func hiddenNote(n int) string {
	if n == 0 {
		return " (pm agents --all lists ended ones)"
	}
	return "; " + render.Plural(n, "ended agent") + " hidden: pm agents --all shows them"
}

// lastActivity is how long ago the agent last did something, and what an
// llm agent is doing: "3s ago, waiting".
func lastActivity(a *store.Agent, last, now time.Time) string {
	s := "-"
	if !last.IsZero() {
		s = task.Ago(max(now.Sub(last), 0)) + " ago"
	}
	if a.Activity != "" && (a.Status == store.AgentRunning || a.Status == store.AgentPending) {
		s += ", " + a.Activity
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
