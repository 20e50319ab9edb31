// Package agentrun implements the hidden `pm agent-run NAME`: the host process
// that runs one agent. pm starts it; people do not.
package agentrun

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cmdutil"
)

// NewCmd builds `pm agent-run`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "agent-run NAME",
		Short:  "Run one agent in this process (started by pm)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := f.Store()
			if err != nil {
				return err
			}
			return agent.Host(f.Context, s, args[0], f.Environ(), f.IO.ErrOut)
		},
	}
}
