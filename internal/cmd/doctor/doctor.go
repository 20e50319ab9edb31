// Package doctor implements `pm doctor`: what pm can and cannot confine on
// this machine, and why (confinement.go), where the project's records are
// and, on a hub, what an acknowledged write survives there (store.go:
// it reads the hub and changes nothing on it), with --check what a crash
// left in this state directory or on the hub (check.go), and with --fix
// that check, then the repair that exists for a stranded agent: this
// machine's supervisor started, or for an agent placed on a worker the
// workers' own (fix.go).
package doctor

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
)

// Options are the inputs of pm doctor.
type Options struct {
	Check bool
	Fix   bool // with Check: start the repair that exists (fix.go)
	JSON  bool
}

// NewCmd builds `pm doctor`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Say what pm can confine on this machine, and why; --check the state for what a crash left",
		Long: "pm doctor probes the sandbox as pm's agent hosts do (Landlock, a mount namespace of its own)\n" +
			"and reads the project's config, then says what confines run_command, exec agents and\n" +
			"pm design --test here, and what each fallback gives up (docs/security.md). Then where the\n" +
			"records are: this machine's files, or a hub (store.url), whether it answers, and per stream\n" +
			"what an acknowledged write survives (docs/distributed.md).\n\n" +
			"pm doctor --check looks at the whole state without changing it: rooms at their limit still open, " +
			"roles never started, tasks blocked only by done tasks, agents recorded running whose process is gone, " +
			"live work with no supervisor, a git index.lock nobody holds, processes of runs no agent has, " +
			"count marks and indexes that disagree with the logs and records, and records that cannot be read.\n\n" +
			"pm doctor --fix (a --check that then repairs what is safe): for an agent recorded running whose host is\n" +
			"gone, and live work with no supervisor, it starts this machine's supervisor, which respawns the wanted\n" +
			"ones and records the others ended, as any command's revival does; an agent placed on a worker that\n" +
			"is gone is left to the workers (it names the worker and says to start one). Nothing else is changed.\n\n" +
			"Exit codes with --check: 0 nothing found · 1 findings (each listed).",
		Example: `  pm doctor
  pm doctor --check
  pm doctor --check --json | jq '.findings[].kind'
  pm doctor --fix`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVar(&o.Check, "check", false, "check the whole state; exit 1 with each finding listed")
	c.Flags().BoolVar(&o.Fix, "fix", false, "check, then start this machine's supervisor for the stranded agents it keeps (implies --check)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	if o.Check || o.Fix {
		return runCheck(f, o)
	}
	r := Confinement(f)
	r.Store = Store(f)
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, r)
	}
	return r.Print(f.IO.Out)
}
