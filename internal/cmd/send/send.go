// Package send implements `pm send PO "msg"`.
package send

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm send.
type Options struct {
	CodeDesigner func() *bool // --code-designer; nil result: not given
	PO           string
	Message      string
	Stream       bool
	JSON         bool
}

// NewCmd builds `pm send`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   `send PO "message"`,
		Short: "Send one message to a prompt object and print its reply",
		Long: "Send one message to a prompt object and print its reply.\n\n" +
			"With \"-\" as the message it is read from standard input; a message that itself starts\n" +
			"with \"-\" goes after \"--\" so it is not taken for a flag.",
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			msg, err := cmdutil.MessageArg(c, args, 1, f.IO.In, ops.MaxSend)
			if err != nil {
				return err
			}
			o.PO, o.Message = args[0], msg
			return run(f, o)
		},
	}
	c.Flags().BoolVar(&o.Stream, "stream", false, "print the reply as it is generated")
	c.Flags().BoolVar(&o.JSON, "json", false, "print {po, reply} as JSON")
	o.CodeDesigner = cmdutil.CodeDesignerFlag(c)
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	sess.CodeDesigner = o.CodeDesigner()
	in := ops.SendInput{PO: o.PO, Message: o.Message}
	if o.Stream && !o.JSON {
		in.OnDelta = func(t string) { fmt.Fprint(f.IO.Out, render.Terminal(t)) }
	}
	res, err := ops.Send(f.Context, sess, in)
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res)
	}
	if in.OnDelta != nil {
		fmt.Fprintln(f.IO.Out)
		return nil
	}
	fmt.Fprintln(f.IO.Out, render.Terminal(res.Reply))
	return nil
}
