// Package taskcmd implements `pm task`.
package taskcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm task.
type Options struct {
	CodeDesigner func() *bool // --code-designer; nil result: not given
	Description  string
	BlockedBy    []string
	Runtime      string
	Model        string
	Review       bool
	On           string
	JSON         bool
}

// NewCmd builds `pm task`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   `task "description"`,
		Short: "Create a task and start its owner agent",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Description = args[0]
			return run(f, o)
		},
	}
	c.Flags().StringSliceVar(&o.BlockedBy, "blocked-by", nil, "task ids that must be done first (repeat or comma-separate)")
	c.Flags().StringVar(&o.Runtime, "runtime", "", "how the owner runs: llm, exec or none (default from config.json)")
	c.Flags().StringVar(&o.Model, "model", "", "model for llm agents")
	c.Flags().BoolVar(&o.Review, "review", false, "hold the task's merge until you run pm merge or pm reject")
	c.Flags().StringVar(&o.On, "on", "", "run its agents on this worker (pm workers; default: the one with the most free capacity)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the task as JSON")
	o.CodeDesigner = cmdutil.CodeDesignerFlag(c)
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	sess.CodeDesigner = o.CodeDesigner()
	t, err := ops.CreateTask(f.Context, sess, ops.TaskInput{Description: o.Description, BlockedBy: o.BlockedBy, Runtime: config.RuntimeName(o.Runtime), Model: o.Model, Review: o.Review, On: o.On})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, t)
	}
	fmt.Fprintf(f.IO.Out, "%s %s owner @%s (%s)\n", t.ID, t.Status, t.Owner, t.Runtime)
	if t.Worktree != nil {
		fmt.Fprintf(f.IO.Out, "works in %s on %s (merges into %s)\n", t.Worktree.Path, strings.TrimPrefix(t.Worktree.Branch, "refs/heads/"), t.IntoName())
	}
	if t.Status == store.TaskBlocked {
		fmt.Fprintf(f.IO.Out, "waiting for %s; the owner starts when they are done\n", strings.Join(t.BlockedBy, ", "))
	} else if t.Runtime == config.RuntimeNone {
		fmt.Fprintf(f.IO.Out, "runtime none: act as the owner with PM_AGENT=%s pm ...\n", t.Owner)
	}
	return nil
}
