// Package phasecmd implements `pm phase`.
package phasecmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
)

// Options are the inputs of pm phase.
type Options struct {
	Name  string
	Limit int
	Roles []string
	Rules string
	Task  string
	JSON  bool
}

// NewCmd builds `pm phase`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   `phase "Name" --limit N --roles r1,r2`,
		Short: "Open a discussion phase and start one role agent per role",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Name = args[0]
			return run(f, o)
		},
	}
	c.Flags().IntVar(&o.Limit, "limit", 0, "messages after which the phase closes (required)")
	c.Flags().StringSliceVar(&o.Roles, "roles", nil, "roles to bring in, e.g. designer,developer (max 3)")
	c.Flags().StringVar(&o.Rules, "rules", "", "rules for this phase, e.g. \"no code, just ideas\"")
	c.Flags().StringVar(&o.Task, "task", "", "task (default: your own, or the only active one)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the phase as JSON")
	_ = c.MarkFlagRequired("limit")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.OpenPhase(f.Context, sess, ops.PhaseInput{Task: o.Task, Name: o.Name, Limit: o.Limit, Roles: o.Roles, Rules: o.Rules})
	if err != nil {
		return err
	}
	ph := res.Phase
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, ph)
	}
	fmt.Fprintf(f.IO.Out, "%s %q open: limit %d", ph.ID, ph.Name, ph.MessageLimit)
	for i, n := range res.Agents {
		fmt.Fprintf(f.IO.Out, ", @%s (%s)", n, ph.Roles[i])
	}
	fmt.Fprintln(f.IO.Out)
	return nil
}
