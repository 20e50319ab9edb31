// Package history implements `pm history`.
package history

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm history.
type Options struct {
	Tail int
	Task string
	JSON bool
}

// NewCmd builds `pm history`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "history",
		Short: "Read the last messages of the task's phases, oldest phase first",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().IntVarP(&o.Tail, "tail", "n", 20, "how many messages, counted back from the newest")
	c.Flags().StringVar(&o.Task, "task", "", "task (default: your own, or the only active one)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print messages as JSON lines")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.History(f.Context, sess, ops.HistoryInput{Task: o.Task, Tail: &o.Tail})
	if err != nil {
		return err
	}
	if o.JSON {
		for _, e := range res.Entries {
			if err := cmdutil.PrintJSONLine(f.IO.Out, e.Message); err != nil {
				return err
			}
		}
		return nil
	}
	render.PrintHistory(f.IO.Out, res.Entries)
	if len(res.Entries) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "no messages yet in %s\n", res.Task.ID)
	}
	return nil
}
