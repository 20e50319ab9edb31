// Package prompts implements `pm prompts`.
package prompts

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm prompts.
type Options struct {
	JSON bool
	Wide bool
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
	c.Flags().BoolVar(&o.Wide, "wide", false, "print every column whole (on a terminal the widest are cut to fit)")
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
	// Descriptions can be written by agents (create_capability): the table
	// makes every cell safe.
	tb := &render.Table{Header: []string{"NAME", "STATE", "CAPABILITIES", "DESCRIPTION"}, Width: render.Width(f.IO.Out), Wide: o.Wide}
	for _, e := range list {
		tb.Add(e.Name, e.State, strings.Join(e.Capabilities, ","), e.Description)
	}
	return tb.Write(f.IO.Out)
}
