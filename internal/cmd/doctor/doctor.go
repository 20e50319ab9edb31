// Package doctor implements `pm doctor`: what is wrong with this machine or
// this state directory, and what to do about it.
package doctor

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
)

// Options are the inputs of pm doctor.
type Options struct {
	Check bool
	JSON  bool
}

// NewCmd builds `pm doctor`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the state for what a crash left (--check): stranded work, orphan processes, caches that disagree",
		Long: "pm doctor --check looks at the whole state without changing it: rooms at their limit still open, " +
			"roles never started, tasks blocked only by done tasks, agents recorded running whose process is gone, " +
			"live work with no supervisor, a git index.lock nobody holds, processes of runs no agent has, " +
			"count marks and indexes that disagree with the logs and records, and records that cannot be read.\n\n" +
			"Exit codes: 0 nothing found · 1 findings (each listed).",
		Example: `  pm doctor --check
  pm doctor --check --json | jq '.findings[].kind'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVar(&o.Check, "check", false, "check the whole state; exit 1 with each finding listed")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the findings as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	if o.Check {
		return runCheck(f, o)
	}
	return errs.Usagef("pm doctor --check", "pm doctor needs --check")
}
