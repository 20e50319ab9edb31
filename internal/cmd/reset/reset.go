// Package reset implements `pm reset`.
package reset

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm reset.
type Options struct {
	Force bool
	Yes   bool
}

// NewCmd builds `pm reset`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "reset",
		Short: "Kill all agents and delete all state (config.json and prompts/ are kept)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVar(&o.Force, "force", false, "reset even while tasks are live")
	c.Flags().BoolVarP(&o.Yes, "yes", "y", false, "do not ask on a terminal (scripts are never asked)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	if !o.Yes {
		// A person at a terminal is asked: everything goes, not only live work.
		yes, asked := f.Confirm(question(sess.Store))
		if asked && !yes {
			fmt.Fprintln(f.IO.ErrOut, "reset: nothing changed")
			return nil
		}
	}
	res, err := ops.Reset(f.Context, sess, ops.ResetInput{Force: o.Force})
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "reset: %s removed, %s killed\n", render.Plural(res.Tasks, "task"), render.Plural(len(res.Killed), "agent"))
	return nil
}

// question is what a person at a terminal is asked: on a hub, the wipe
// reaches every machine joined to the project, so it names the project
// and the hub, not this directory.
func question(s *store.Store) string {
	if s.OnHub() {
		c := s.Config().Store
		return fmt.Sprintf("pm reset deletes every task, event, request and room of project %s on the hub %s, for every machine joined to it (config.json, prompts and designs stay). Go on?", c.Project, c.URL)
	}
	return fmt.Sprintf("pm reset deletes every task, event, request and log of %s (config.json and prompts/ stay). Go on?", s.Root)
}
