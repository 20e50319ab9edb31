// Package wait implements `pm wait`: a person's (or script's) way to block
// until a task ends or needs them.
package wait

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/render/taskview"
)

// Options are the inputs of pm wait.
type Options struct {
	Task    string
	Timeout time.Duration
	JSON    bool
}

// NewCmd builds `pm wait`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "wait tk-...",
		Short: "Block until a task is done, killed or stalled; the exit code says which",
		Long: "Block until the task is done, killed or stalled (its owner failed or exited without pm done).\n\n" +
			"Exit codes: 0 done · 1 stalled (the Try: line says what to run next) · 5 killed · 124 --timeout passed.",
		Example: `  pm wait tk-1a2b3c && git log -1
  pm wait tk-1a2b3c --timeout 30m || pm status tk-1a2b3c`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteIDs(f, ids.Task),
		RunE: func(c *cobra.Command, args []string) error {
			o.Task = args[0]
			return run(f, o)
		},
	}
	c.Flags().DurationVar(&o.Timeout, "timeout", 0, "give up after this long, e.g. 30m (default: wait as long as it takes)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the task and its state as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	in := ops.WaitInput{Task: o.Task}
	if o.Timeout > 0 {
		in.Timeout = o.Timeout.String()
	}
	res, err := ops.Wait(f.Context, sess, in)
	if res.Task == nil {
		return err
	}
	if o.JSON {
		if perr := cmdutil.PrintJSON(f.IO.Out, res); perr != nil {
			return perr
		}
		return err
	}
	fmt.Fprintf(f.IO.Out, "%s %s  %s\n", res.Task.ID, taskview.HealthLine(res.Health), render.Line(res.Task.Description))
	return err
}
