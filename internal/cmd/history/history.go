// Package history implements `pm history`.
package history

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/phase"
)

// Options are the inputs of pm history.
type Options struct {
	Tail int
	Task string
	JSON bool
}

// NewCmd builds `pm history`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "history",
		Short: "Read the last messages of the task's phases, oldest phase first",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().IntVarP(&o.Tail, "tail", "n", 20, "how many messages, counted back from the newest")
	c.Flags().StringVar(&o.Task, "task", "", "task (default: your own, or the only active one)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print messages as JSON lines")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, actor, err := f.Session()
	if err != nil {
		return err
	}
	t, err := cmdutil.Task(s, actor, o.Task)
	if err != nil {
		return err
	}
	all, err := phase.History(s, t.ID, o.Tail)
	if err != nil {
		return err
	}
	if o.JSON {
		for _, e := range all {
			if err := cmdutil.PrintJSONLine(f.IO.Out, e.Message); err != nil {
				return err
			}
		}
		return nil
	}
	cmdutil.PrintHistory(f.IO.Out, all)
	if len(all) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "no messages yet in %s\n", t.ID)
	}
	return nil
}
