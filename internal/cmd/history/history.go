// Package history implements `pm history`.
package history

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/store"
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

type entry struct {
	phase *store.Phase
	msg   store.Message
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	actor, err := f.Actor(s)
	if err != nil {
		return err
	}
	t, err := cmdutil.Task(s, actor, o.Task)
	if err != nil {
		return err
	}
	phases, err := s.Phases(t.ID)
	if err != nil {
		return err
	}
	var all []entry
	for _, p := range phases {
		msgs, err := s.Messages(t.ID, p.ID)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			all = append(all, entry{p, m})
		}
	}
	if o.Tail >= 0 && len(all) > o.Tail {
		all = all[len(all)-o.Tail:]
	}
	var last string
	for _, e := range all {
		if o.JSON {
			if err := cmdutil.PrintJSONLine(f.IO.Out, e.msg); err != nil {
				return err
			}
			continue
		}
		if e.phase.ID != last {
			fmt.Fprintf(f.IO.Out, "== %s %q (%s)\n", e.phase.ID, e.phase.Name, e.phase.Status)
			last = e.phase.ID
		}
		cmdutil.PrintMessage(f.IO.Out, e.msg)
	}
	if len(all) == 0 && !o.JSON {
		fmt.Fprintf(f.IO.ErrOut, "no messages yet in %s\n", t.ID)
	}
	return nil
}
