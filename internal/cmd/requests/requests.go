// Package requests implements `pm requests`.
package requests

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/request"
)

// Options are the inputs of pm requests.
type Options struct {
	All  bool
	JSON bool
}

// NewCmd builds `pm requests`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "requests",
		Short: "List agents' questions waiting for a human (answer with pm answer)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVarP(&o.All, "all", "a", false, "list answered and moot requests too")
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	rs, err := ops.Requests(f.Context, sess, ops.RequestsInput{All: o.All})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, rs)
	}
	if len(rs) == 0 {
		if o.All {
			fmt.Fprintln(f.IO.Out, "no requests yet")
		} else {
			fmt.Fprintln(f.IO.Out, "no pending requests")
		}
		return nil
	}
	for _, r := range rs {
		from := "@" + r.From
		if r.TaskID != "" {
			from += " (" + r.TaskID + ")"
		}
		fmt.Fprintf(f.IO.Out, "%s %-8s %s  %s\n", r.ID, render.Line(r.Status), render.Line(from), r.CreatedAt.Local().Format("15:04:05"))
		fmt.Fprintf(f.IO.Out, "    %s\n", strings.ReplaceAll(render.Terminal(r.Question), "\n", "\n    "))
		switch r.Status {
		case request.Answered:
			fmt.Fprintf(f.IO.Out, "    -> %s\n", strings.ReplaceAll(render.Terminal(r.Answer), "\n", "\n       "))
		case request.Moot:
			fmt.Fprintf(f.IO.Out, "    -> moot: %s\n", render.Line(r.Why))
		}
	}
	if !o.All {
		fmt.Fprintf(f.IO.ErrOut, "answer with: pm answer %s \"...\"\n", rs[0].ID)
	}
	return nil
}
