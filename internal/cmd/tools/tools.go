// Package tools implements `pm tools [NAME]`: the documentation of every
// tool a model can call (internal/tooldoc).
package tools

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm tools.
type Options struct {
	Name string
	JSON bool
	Wide bool
}

// NewCmd builds `pm tools`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "tools [NAME]",
		Short: "List the tools models can call with their docs, or show one tool's doc",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return run(f, o)
		},
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
	res, err := ops.ToolDocs(f.Context, sess, ops.ToolDocsInput{Name: o.Name})
	if err != nil {
		return err
	}
	if o.JSON {
		if o.Name != "" {
			return cmdutil.PrintJSON(f.IO.Out, res.Tools[0])
		}
		return cmdutil.PrintJSON(f.IO.Out, res.Tools)
	}
	if o.Name != "" {
		// Docs can be written by agents (create_capability, overrides).
		fmt.Fprintln(f.IO.Out, strings.TrimRight(render.Terminal(res.Tools[0].Text), "\n"))
		return nil
	}
	tb := &render.Table{Header: []string{"NAME", "KIND", "SOURCE", "SUMMARY"}, Width: render.Width(f.IO.Out), Wide: o.Wide}
	for _, t := range res.Tools {
		tb.Add(t.Name, t.Kind, t.Source, t.Summary)
	}
	return tb.Write(f.IO.Out)
}
