// Package waitchildren implements `pm wait-children`.
package waitchildren

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
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
	s, _, t, err := f.OwnedTask(o.Task)
	if err != nil {
		return err
	}
	children, err := task.WaitChildren(f.Context, s, t.ID, o.Timeout)
	if o.JSON {
		if children == nil {
			children = []*store.Task{}
		}
		if perr := cmdutil.PrintJSON(f.IO.Out, children); perr != nil {
			return perr
		}
	} else {
		for _, c := range children {
			fmt.Fprintf(f.IO.Out, "%s %s %s\n", c.ID, c.Status, c.Description)
		}
		if err == nil {
			fmt.Fprintf(f.IO.Out, "all %d subtasks of %s finished\n", len(children), t.ID)
		}
	}
	return err
}
