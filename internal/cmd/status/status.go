// Package status implements `pm status`.
package status

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/render/taskview"
	"github.com/plasmodium/pm/internal/state"
)

// Options are the inputs of pm status.
type Options struct {
	TaskID string
	All    bool
	JSON   bool
}

// NewCmd builds `pm status`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:               "status [tk-...]",
		Short:             "Show tasks, or one task with its phases and agents",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cmdutil.CompleteIDs(f, ids.Task),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.TaskID = args[0]
			}
			return run(f, o)
		},
	}
	c.Flags().BoolVarP(&o.All, "all", "a", false, "list finished (done, killed) tasks too")
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.Status(f.Context, sess, ops.StatusInput{Task: o.TaskID, All: o.All})
	if err != nil {
		return err
	}
	if res.View != nil {
		if o.JSON {
			return cmdutil.PrintJSON(f.IO.Out, res.View)
		}
		taskview.PrintTaskView(f.IO.Out, res.View.View, res.View.Health, res.View.Requests, sess.Actor)
		printCost(f, res.View.Cost)
		printWarnings(f, res.View.Warnings)
		return nil
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res.Summary)
	}
	taskview.PrintSummary(f.IO.Out, res.Summary.Summary, res.Summary.Health)
	if iso := res.Summary.Isolation; iso != "worktree" {
		fmt.Fprintf(f.IO.Out, "isolation %s\n", render.Line(iso))
	}
	printWorkers(f, sess.State)
	printWarnings(f, res.Summary.Warnings)
	return nil
}

// printWorkers says, on a hub project, which machines run its agents.
func printWorkers(f *cmdutil.Factory, st state.State) {
	ws, ok := state.WorkersOf(st)
	if !ok {
		return
	}
	list, err := ws.Workers()
	switch {
	case err != nil:
		fmt.Fprintf(f.IO.Out, "workers: cannot list them: %v\n", err)
	case len(list) == 0:
		fmt.Fprintln(f.IO.Out, "workers: none registered: agents run on the machine whose pm starts them (pm worker registers one)")
	default:
		names := make([]string, len(list))
		for i, w := range list {
			names[i] = fmt.Sprintf("%s (%d/%d)", w.Name, len(w.Running), w.Capacity)
			if len(w.Waiting) > 0 { // placed there, every place taken
				names[i] = fmt.Sprintf("%s (%d/%d, %d waiting for a place)", w.Name, len(w.Running), w.Capacity, len(w.Waiting))
			}
		}
		fmt.Fprintf(f.IO.Out, "workers: %s (pm workers)\n", strings.Join(names, ", "))
	}
}

// printWarnings ends the output with what is wrong beside the tasks.
func printWarnings(f *cmdutil.Factory, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(f.IO.Out, "warning: %s\n", render.Line(w))
	}
}

// printCost is the task's dollars against budgets.task.max_usd (pm costs
// --task has the detail).
func printCost(f *cmdutil.Factory, c ops.TaskCost) {
	line := "  cost " + c.Cost
	if c.MaxUSD > 0 {
		line += " of " + cost.USD(c.MaxUSD) + " (budgets.task.max_usd)"
	}
	fmt.Fprintln(f.IO.Out, line)
}
