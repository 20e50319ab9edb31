// Package stop implements `pm stop`.
package stop

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm stop.
type Options struct {
	Name string
	JSON bool
}

// NewCmd builds `pm stop`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "stop NAME",
		Short: "End a resident prompt object's process; the next pm send starts it again",
		Long: "End a resident prompt object's process (pm send and pm talk start one per object).\n" +
			"Residents also end on their own after runtime.resident_idle without a message (default 5m).\n" +
			"Agents of a task end with the task: pm kill tk-...",
		Example: `  pm send greeter "hi"
  pm stop greeter`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Name = args[0]
			return run(f, o)
		},
	}
	c.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.Stop(f.Context, sess, ops.StopInput{Name: o.Name})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res)
	}
	if !res.Stopped {
		fmt.Fprintf(f.IO.Out, "@%s is not running (%s)\n", render.Line(res.Agent.Name), render.Line(res.Agent.Status))
		return nil
	}
	fmt.Fprintf(f.IO.Out, "stopped @%s; the next message starts it again\n", render.Line(res.Agent.Name))
	return nil
}
