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
	// Records can be hand-edited: the table makes every cell safe.
	tb := &render.Table{Header: []string{"NAME", "ROLE", "TASK", "PHASE", "RUNTIME", "STATUS", "PID", "RESTARTS", "ACTIVITY", "CONTAINMENT", "CODE-DESIGNER", "SANDBOX"},
		Width: render.Width(f.IO.Out), Wide: o.Wide}
	noKernel, rulesOnly := false, false
	for _, a := range res.Agents {
		tb.Add(a.Name, render.AgentRole(a), dash(a.TaskID), dash(a.PhaseID), string(a.Runtime), status(a), strconv.Itoa(a.Pid), strconv.Itoa(a.Restarts),
			activity(a, f.Now()), dash(a.Containment), a.CodeDesigner.String(), dash(a.Sandbox))
		noKernel = noKernel || a.Sandbox == agent.SandboxNoKernel
		rulesOnly = rulesOnly || a.Sandbox == string(sandbox.ModeLandlock)
	}
	if err := tb.Write(f.IO.Out); err != nil {
		return err
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

// activity says what an llm agent is doing and since when ("working 3s").
func activity(a *store.Agent, now time.Time) string {
	if a.Activity == "" || a.ActiveAt == nil {
		return "-"
	}
	return a.Activity + " " + now.Sub(*a.ActiveAt).Round(time.Second).String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
