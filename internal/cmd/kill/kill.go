// Package kill implements `pm kill`.
package kill

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm kill.
type Options struct {
	TaskID  string
	Restart bool
	JSON    bool
}

// NewCmd builds `pm kill`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:               "kill tk-...",
		Short:             "End every agent of a task and its subtasks; --restart starts a fresh owner",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteIDs(f, ids.Task),
		RunE: func(c *cobra.Command, args []string) error {
			o.TaskID = args[0]
			return run(f, o)
		},
	}
	c.Flags().BoolVar(&o.Restart, "restart", false, "start a fresh owner with the same description")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.Kill(f.Context, sess, ops.KillInput{Task: o.TaskID, Restart: o.Restart})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res)
	}
	fmt.Fprintf(f.IO.Out, "killed %s%s and %s%s\n", render.Plural(len(res.Tasks), "task"), listed(res.Tasks), render.Plural(len(res.Agents), "agent"), listed(res.Agents))
	if res.Restarted != nil {
		fmt.Fprintf(f.IO.Out, "restarted %s %s with owner @%s\n", res.Restarted.ID, res.Restarted.Status, res.NewOwner)
	}
	return nil
}

// listed is ": a, b" after a count, or nothing for none.
func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}
