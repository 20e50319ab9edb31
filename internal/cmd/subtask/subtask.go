// Package subtask implements `pm subtask`.
package subtask

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
)

// Options are the inputs of pm subtask.
type Options struct {
	Description string
	ContextFile string
	Task        string
	Runtime     string
	On          string
	JSON        bool
}

// NewCmd builds `pm subtask`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   `subtask "description"`,
		Short: "Create a child task with its own owner (pass the baton)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Description = args[0]
			return run(f, o)
		},
	}
	c.Flags().StringVar(&o.ContextFile, "context-file", "", "file whose text the child owner receives as context.md (- reads standard input)")
	c.Flags().StringVar(&o.Task, "task", "", "parent task (default: your own task)")
	c.Flags().StringVar(&o.Runtime, "runtime", "", "runtime of the child owner (default: the parent's)")
	c.Flags().StringVar(&o.On, "on", "", "run its agents on this worker (pm workers; default: where the parent's owner runs)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the subtask as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	in := ops.SubtaskInput{Task: o.Task, Description: o.Description, Runtime: config.RuntimeName(o.Runtime), On: o.On}
	switch o.ContextFile {
	case "":
	case "-":
		if in.Context, err = ops.ReadContext(f.IO.In, "the context on standard input"); err != nil {
			return err
		}
	default:
		if in.Context, err = ops.ReadContextFile(o.ContextFile); err != nil {
			return err
		}
	}
	res, err := ops.Subtask(f.Context, sess, in)
	if err != nil {
		return err
	}
	t := res.Task
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, t)
	}
	fmt.Fprintf(f.IO.Out, "%s %s owner @%s (subtask of %s, depth %d)\n", t.ID, t.Status, t.Owner, res.Parent.ID, t.Depth)
	return nil
}
