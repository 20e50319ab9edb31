// Package costs implements `pm costs`.
package costs

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm costs.
type Options struct {
	Task  string
	Since string
	JSON  bool
}

// NewCmd builds `pm costs`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "costs",
		Short: "Show what the model calls cost in dollars, per agent, task and project",
		Long: `Show what the model calls cost in dollars: per agent, per task, the project's
total and its spend in the last hour and 24 hours against budgets.project.

Dollars are the usage each model call reports times the model's price (the
shipped table, or config.json's prices, which win), or the figure the runtime
reports itself (Claude Code's total_cost_usd). A model without a price, or an
agent CLI that reports no usage, is "unknown": never counted as $0.`,
		Example: `  pm costs
  pm costs --task tk-a1b2c3
  pm costs --since 24h --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().StringVar(&o.Task, "task", "", "only this task's model calls")
	c.Flags().StringVar(&o.Since, "since", "", "only the calls of this last duration (24h, 90m)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON (with every model call)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.Costs(f.Context, sess, ops.CostsInput{Task: o.Task, Since: o.Since})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res)
	}
	if len(res.Entries) == 0 {
		fmt.Fprintln(f.IO.Out, "no model calls recorded yet")
	} else {
		tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AGENT\tTASK\tRUNTIME\tMODEL\tTURNS\tINPUT\tCACHED\tOUTPUT\tCOST\tBUDGET")
		l := render.Line[string]
		for _, a := range res.Agents {
			u := a.Sum.Usage
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", l(a.Name), dash(a.Task), l(a.Runtime), l(dash(a.Model)),
				a.Sum.Turns, u.Input, u.Cached+u.CacheWrite, u.Output, a.Cost, budget(a.MaxUSD, "budgets.agent.max_usd"))
		}
		for _, t := range res.Tasks {
			fmt.Fprintf(tw, "%s\t%s\t\t\t%d\t%d\t%d\t%d\t%s\t%s\n", "(task)", t.Task, t.Sum.Turns, t.Sum.Usage.Input,
				t.Sum.Usage.Cached+t.Sum.Usage.CacheWrite, t.Sum.Usage.Output, t.Cost, budget(t.MaxUSD, "budgets.task.max_usd"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.Out, "total: %s over %s\n", res.Total.Cost, render.Plural(int(res.Total.Sum.Entries), "model call"))
	}
	if res.Task == "" {
		for _, w := range res.Windows {
			fmt.Fprintf(f.IO.Out, "project, %s: %s%s\n", w.Window, w.Cost, limit(w.Limit, w.Key))
		}
	}
	if res.Total.Sum.Unknown > 0 {
		fmt.Fprintln(f.IO.Out, "unknown: a model without a price (add it to prices in config.json) or an agent CLI that reports no usage")
	}
	return nil
}

func budget(v float64, key string) string {
	if v == 0 {
		return "-"
	}
	return cost.USD(v) + " (" + key + ")"
}

func limit(v float64, key string) string {
	if v == 0 {
		return ""
	}
	return " of " + cost.USD(v) + " (" + key + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
