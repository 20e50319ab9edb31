// Package prompts implements `pm prompts`.
package prompts

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm prompts.
type Options struct {
	JSON bool
}

// NewCmd builds `pm prompts`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "prompts",
		Short: "List prompt objects with their capabilities and state",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	list, err := ops.Prompts(f.Context, sess, ops.PromptsInput{})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, list)
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tCAPABILITIES\tDESCRIPTION")
	for _, e := range list {
		l := render.Line[string] // descriptions can be written by agents (create_capability)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l(e.Name), l(e.State), l(strings.Join(e.Capabilities, ",")), l(e.Description))
	}
	return tw.Flush()
}
