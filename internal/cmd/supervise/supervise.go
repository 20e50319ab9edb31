// Package supervise implements the hidden `pm supervise`: the daemon that
// respawns crashed agents. Commands that start agents start it on demand.
package supervise

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/supervisor"
)

// NewCmd builds `pm supervise`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "supervise",
		Short:  "Keep agents alive until nothing is live (started by pm)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := f.Store()
			if err != nil {
				return err
			}
			l, err := f.Launcher(s)
			if err != nil {
				return err
			}
			sv := &supervisor.Supervisor{
				Store: s, Launcher: l, Policy: supervisor.DefaultPolicy,
				Log:        slog.New(slog.NewTextHandler(f.IO.ErrOut, nil)),
				RaiseHuman: f.RaiseHuman(s),
			}
			return sv.Run(f.Context)
		},
	}
}
