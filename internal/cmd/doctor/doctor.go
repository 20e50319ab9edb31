// Package doctor implements `pm doctor`: what pm can and cannot confine on
// this machine, and why (confinement.go).
package doctor

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
)

// Options are the inputs of pm doctor.
type Options struct {
	JSON bool
}

// NewCmd builds `pm doctor`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Say what pm can and cannot confine on this machine, and why",
		Long: "pm doctor probes the sandbox as pm's agent hosts do (Landlock, a mount namespace of its own)\n" +
			"and reads the project's config, then says what confines run_command, exec agents and\n" +
			"pm design --test here, and what each fallback gives up (docs/security.md).",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	r := Confinement(f)
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, r)
	}
	return r.Print(f.IO.Out)
}
