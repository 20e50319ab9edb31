// Package endphase implements `pm end-phase`.
package endphase

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
)

// Options are the inputs of pm end-phase.
type Options struct {
	Task string
	JSON bool
}

// NewCmd builds `pm end-phase`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "end-phase",
		Short: "Close the active phase early; its role agents leave",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().StringVar(&o.Task, "task", "", "task (default: your own, or the only active one)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the phase as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	out, err := ops.EndPhase(f.Context, sess, ops.EndInput{Task: o.Task})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, out)
	}
	fmt.Fprintf(f.IO.Out, "%s %q closed early\n", out.ID, out.Name)
	return nil
}
