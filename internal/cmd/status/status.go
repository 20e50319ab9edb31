// Package status implements `pm status`.
package status

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/task"
)

// Options are the inputs of pm status.
type Options struct {
	TaskID string
	All    bool
	JSON   bool
}

// NewCmd builds `pm status`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "status [tk-...]",
		Short: "Show tasks, or one task with its phases and agents",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.TaskID = args[0]
			}
			return run(f, o)
		},
	}
	c.Flags().BoolVarP(&o.All, "all", "a", false, "list finished (done, killed) tasks too")
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, actor, err := f.Session()
	if err != nil {
		return err
	}
	if o.TaskID == "" && actor.Agent != nil && actor.Agent.TaskID != "" {
		o.TaskID = actor.Agent.TaskID
	}
	if o.TaskID != "" {
		v, err := task.Describe(s, o.TaskID)
		if err != nil {
			return err
		}
		if o.JSON {
			return cmdutil.PrintJSON(f.IO.Out, v)
		}
		cmdutil.PrintTaskView(f.IO.Out, v, actor)
		return nil
	}
	sum, err := task.Summarize(s, o.All)
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, sum)
	}
	cmdutil.PrintSummary(f.IO.Out, sum)
	return nil
}
