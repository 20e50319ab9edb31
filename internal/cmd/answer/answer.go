// Package answer implements `pm answer`.
package answer

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm answer.
type Options struct {
	ID   string
	Text string
	JSON bool
}

// NewCmd builds `pm answer`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:               `answer rq-... "text"`,
		Short:             "Answer an agent's question; the waiting agent resumes at once",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: cmdutil.CompleteIDs(f, ids.Request),
		RunE: func(c *cobra.Command, args []string) error {
			o.ID, o.Text = args[0], strings.Join(args[1:], " ")
			return run(f, o)
		},
	}
	c.Flags().BoolVar(&o.JSON, "json", false, "print the answered request as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	r, err := ops.Answer(f.Context, sess, ops.AnswerInput{ID: o.ID, Text: o.Text})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, r)
	}
	fmt.Fprintf(f.IO.Out, "%s answered; %s\n", r.ID, render.Line(r.Outcome))
	return nil
}
