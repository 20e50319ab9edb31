// Package top implements `pm top`, the whole system on a terminal.
package top

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/tui"
)

// NewCmd builds `pm top`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "top",
		Short: "Watch tasks, rooms, agents, requests and the bus live on a terminal; end, kill, restart, answer",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			sess, err := f.Session()
			if err != nil {
				return err
			}
			if !tui.UseTUI(f.IO.In, f.IO.Out, f.Getenv, false) {
				return errs.Usagef("use pm status, pm requests and pm log -f in scripts", "pm top needs a terminal")
			}
			return tui.RunTop(f.Context, tui.TopFromSession(sess), f.IO.In, f.IO.Out)
		},
	}
}
