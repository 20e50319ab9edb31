// Package waitchildren implements `pm wait-children`.
package waitchildren

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm wait-children.
type Options struct {
	Timeout time.Duration
	Task    string
	JSON    bool
}

// NewCmd builds `pm wait-children`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "wait-children",
		Short: "Block until every subtask is done (exit 124 on --timeout)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().DurationVar(&o.Timeout, "timeout", 0, "give up after this long, e.g. 30m (default: wait forever)")
	c.Flags().StringVar(&o.Task, "task", "", "task (default: your own, or the only active one)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the children as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	in := ops.WaitChildrenInput{Task: o.Task}
	if o.Timeout > 0 {
		in.Timeout = o.Timeout.String()
	}
	res, err := ops.WaitChildren(f.Context, sess, in)
	if res.Task == nil {
		return err
	}
	if o.JSON {
		if perr := cmdutil.PrintJSON(f.IO.Out, res.Children); perr != nil {
			return perr
		}
		return err
	}
	for _, c := range res.Children {
		fmt.Fprintf(f.IO.Out, "%s %s %s\n", c.ID, render.Line(c.Status), render.Line(c.Description))
	}
	if err == nil {
		if len(res.Children) == 1 {
			fmt.Fprintf(f.IO.Out, "the 1 subtask of %s finished\n", res.Task.ID)
		} else {
			fmt.Fprintf(f.IO.Out, "all %d subtasks of %s finished\n", len(res.Children), res.Task.ID)
		}
	}
	return err
}
