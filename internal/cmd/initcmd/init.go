// Package initcmd implements `pm init`.
package initcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm init.
type Options struct {
	IO  cmdutil.IOStreams
	Dir string
	// Agent names the agent CLI preset written as runtime.exec (store.Presets).
	Agent string
}

// NewCmd builds `pm init`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var agentName string
	c := &cobra.Command{
		Use:   "init",
		Short: "Create .plasmodium/ in the current directory",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			wd, err := f.Getwd()
			if err != nil {
				return err
			}
			return run(f, Options{IO: f.IO, Dir: wd, Agent: agentName})
		},
	}
	c.Flags().StringVar(&agentName, "agent", "", "agent CLI the exec runtime starts: "+strings.Join(config.PresetNames(), ", ")+" (see docs/agents.md)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	if o.Agent != "" {
		if _, ok := config.Preset(o.Agent); !ok {
			return config.SetPreset("", o.Agent) // the usage error, before anything is created
		}
	}
	root, created, err := store.Init(o.Dir, f.Now)
	if err != nil {
		return err
	}
	if o.Agent != "" {
		if err := config.SetPreset(root, o.Agent); err != nil {
			return err
		}
	}
	if !created {
		return already(o, root)
	}
	s, err := store.Open(root)
	if err != nil {
		return err
	}
	s.Now, s.Warn = f.Now, o.IO.ErrOut // a failed publish is a warning, not silence
	s.Notify(bus.Event{Kind: bus.EvInit, Text: root})
	fmt.Fprintf(o.IO.Out, "Initialised %s\nNext: pm task \"describe the work\"  (agents run: %s; edit %s to change)\n",
		root, strings.Join(s.Config().Runtime.Exec.Command, " "), s.ConfigPath())
	return nil
}

// already reports a store that exists; a config.json that does not load is
// an error here too, rather than "initialised" over a broken file.
func already(o Options, root string) error {
	s, err := store.OpenForConfig(root)
	if err != nil {
		return err
	}
	if s.BadConfig != nil {
		return &errs.Error{Code: errs.Failure, Msg: "already initialised at " + root + ", but its config does not load", Err: s.BadConfig,
			Try: config.ConfigTry(s.BadConfig, s.ConfigPath())}
	}
	if o.Agent != "" {
		fmt.Fprintf(o.IO.Out, "pm: already initialised at %s (state kept); agents now run the %s preset\n", root, o.Agent)
		return nil
	}
	fmt.Fprintf(o.IO.Out, "pm: already initialised at %s (state kept)\n", root)
	return nil
}
