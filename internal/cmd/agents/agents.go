// Package agents implements `pm agents`.
package agents

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm agents.
type Options struct {
	All  bool
	JSON bool
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
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	list, err := ops.Agents(f.Context, sess, ops.AgentsInput{All: o.All})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(f.IO.Out, "no agents running (pm agents --all lists ended ones)")
		return nil
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tTASK\tPHASE\tRUNTIME\tSTATUS\tPID\tRESTARTS\tACTIVITY")
	for _, a := range list {
		role := a.Role
		if role == "" {
			role = "owner"
		}
		l := render.Line[string] // records can be hand-edited: no raw control reaches the terminal
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", l(a.Name), l(role), l(dash(a.TaskID)), l(dash(a.PhaseID)), l(string(a.Runtime)), l(string(a.Status)), a.Pid, a.Restarts, l(activity(a, f.Now())))
	}
	return tw.Flush()
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
