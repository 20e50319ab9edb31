// Package send implements `pm send PO "msg"`.
package send

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/inbox"
)

// Options are the inputs of pm send.
type Options struct {
	PO      string
	Message string
	Stream  bool
	JSON    bool
}

// NewCmd builds `pm send`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   `send PO "message"`,
		Short: "Send one message to a prompt object and print its reply",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			o.PO, o.Message = args[0], strings.Join(args[1:], " ")
			return run(f, o)
		},
	}
	c.Flags().BoolVar(&o.Stream, "stream", false, "print the reply as it is generated")
	c.Flags().BoolVar(&o.JSON, "json", false, "print {po, reply} as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, actor, err := f.Session()
	if err != nil {
		return err
	}
	if err := cmdutil.CheckPO(f, s, o.PO); err != nil {
		return err
	}
	l, err := f.Launcher(s)
	if err != nil {
		return err
	}
	var onDelta func(string)
	if o.Stream && !o.JSON {
		onDelta = func(t string) { fmt.Fprint(f.IO.Out, t) }
	}
	reply, err := inbox.Call(f.Context, s, l, actor.Name, o.PO, o.Message, onDelta)
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, map[string]string{"po": o.PO, "reply": reply})
	}
	if onDelta != nil {
		fmt.Fprintln(f.IO.Out)
		return nil
	}
	fmt.Fprintln(f.IO.Out, reply)
	return nil
}
