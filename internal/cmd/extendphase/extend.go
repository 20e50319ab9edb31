// Package extendphase implements `pm extend-phase`.
package extendphase

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
)

// Options are the inputs of pm extend-phase.
type Options struct {
	N    int
	Task string
	JSON bool
}

// NewCmd builds `pm extend-phase`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "extend-phase N",
		Short: "Add N messages to the active phase's limit",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return errs.Usagef("pm extend-phase 5", "N must be a whole number, got %q", args[0])
			}
			o.N = n
			return run(f, o)
		},
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
	out, err := ops.ExtendPhase(f.Context, sess, ops.ExtendInput{Task: o.Task, N: o.N})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, out)
	}
	fmt.Fprintf(f.IO.Out, "%s limit now %d\n", out.ID, out.MessageLimit)
	return nil
}
