// Package done implements `pm done`.
package done

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render/taskview"
)

// Options are the inputs of pm done.
type Options struct {
	Task string
	JSON bool
}

// NewCmd builds `pm done`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "done",
		Short: "Mark the task done and commit the work to git (close the loop)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().StringVar(&o.Task, "task", "", "task (default: your own, or the only active one)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.Done(f.Context, sess, ops.DoneInput{Task: o.Task})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res)
	}
	taskview.PrintDone(f.IO.Out, res.Task, res)
	return nil
}
