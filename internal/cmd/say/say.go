// Package say implements `pm say`.
package say

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/phase"
)

// Options are the inputs of pm say.
type Options struct {
	Message string
	Phase   string
	JSON    bool
}

// NewCmd builds `pm say`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   `say "message"`,
		Short: "Post a message to the current phase (exit 5 when it is closed)",
		Long: "Post a message to the current phase (exit 5 when it is closed).\n\n" +
			"With \"-\" as the message it is read from standard input; a message that itself starts\n" +
			"with \"-\" goes after \"--\" so it is not taken for a flag.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			msg, err := cmdutil.MessageArg(c, args, 0, f.IO.In, phase.MaxMessage)
			if err != nil {
				return err
			}
			o.Message = msg
			return run(f, o)
		},
	}
	c.Flags().StringVar(&o.Phase, "phase", "", "phase to post to (default: yours, or the only active one)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the posted message as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	return lite.Say(f.IO.Out, sess.Store, sess.State, sess.Actor, sess.Fence, o.Phase, o.Message, o.JSON)
}
