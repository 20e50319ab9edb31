// Package talk implements `pm talk PO`, a conversation in the terminal.
package talk

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/tui"
)

// Options are the inputs of pm talk.
type Options struct {
	CodeDesigner func() *bool // --code-designer; nil result: not given
	PO           string
	Plain        bool
}

// NewCmd builds `pm talk`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "talk PO",
		Short: "Talk with one prompt object in the terminal (replies streamed; Ctrl-D ends)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.PO = args[0]
			return run(f, o)
		},
	}
	c.Flags().BoolVar(&o.Plain, "plain", false, "line mode even on a terminal (the default when stdout is not a terminal or TERM=dumb)")
	o.CodeDesigner = cmdutil.CodeDesignerFlag(c)
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	sess.CodeDesigner = o.CodeDesigner()
	if err := ops.CheckPO(sess, o.PO); err != nil {
		return err
	}
	if tui.UseTUI(f.IO.In, f.IO.Out, f.Getenv, o.Plain) {
		return tui.RunTalk(f.Context, tui.FromSession(sess), o.PO, f.IO.In, f.IO.Out)
	}
	out := f.IO.Out
	fmt.Fprintf(out, "talking with %s (Ctrl-D to end)\n", o.PO)
	in := bufio.NewScanner(f.IO.In)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		fmt.Fprint(out, "> ")
		if !in.Scan() {
			fmt.Fprintln(out)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		fmt.Fprintf(out, "%s: ", o.PO)
		streamed := false
		res, err := ops.Send(f.Context, sess, ops.SendInput{PO: o.PO, Message: line, OnDelta: func(t string) {
			streamed = true
			fmt.Fprint(out, render.Terminal(t))
		}})
		if err != nil {
			return err
		}
		if !streamed {
			fmt.Fprint(out, render.Terminal(res.Reply))
		}
		fmt.Fprintln(out)
	}
}
