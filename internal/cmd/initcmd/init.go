// Package initcmd implements `pm init`.
package initcmd

import (
	"fmt"
	"os"
	"path/filepath"
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
	// Hub makes the project on a hub, or joins one there (hub.go).
	Hub HubFlags
}

// NewCmd builds `pm init`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var agentName string
	var h HubFlags
	c := &cobra.Command{
		Use:   "init",
		Short: "Create .plasmodium/ in the current directory",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			wd, err := f.Getwd()
			if err != nil {
				return err
			}
			return run(f, Options{IO: f.IO, Dir: wd, Agent: agentName, Hub: h})
		},
	}
	c.Flags().StringVar(&agentName, "agent", "", "agent CLI the exec runtime starts: "+strings.Join(config.PresetNames(), ", ")+" (see docs/agents.md)")
	c.Flags().StringVar(&h.URL, "store", "", "keep the records on this hub: nats://HOST:4222, several comma-separated (docs/distributed.md)")
	c.Flags().StringVar(&h.Project, "project", "", "with --store: join this project on the hub (the name pm init --store printed); without it a new one is made")
	c.Flags().StringVar(&h.Creds, "creds", "", "with --store: NATS credentials file (store.creds)")
	c.Flags().StringVar(&h.NKey, "nkey", "", "with --store: file holding an nkey seed (store.nkey)")
	c.Flags().StringVar(&h.User, "user", "", "with --store: user name; the password is read from $NATS_PASSWORD (store.user)")
	c.Flags().StringVar(&h.TLSCA, "tls-ca", "", "with --store: PEM CA of the hub's certificate (store.tls.ca)")
	c.Flags().StringVar(&h.TLSCert, "tls-cert", "", "with --store: this machine's PEM client certificate (store.tls.cert)")
	c.Flags().StringVar(&h.TLSKey, "tls-key", "", "with --store: its PEM key (store.tls.key)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	joined := false
	if o.Agent != "" {
		if _, ok := config.Preset(o.Agent); !ok {
			return config.SetPreset("", o.Agent) // the usage error, before anything is created
		}
	}
	hub, cred, err := o.Hub.storeConfig()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(o.Dir, config.DirName, "config.json")); err == nil {
		if err := sameHub(filepath.Join(o.Dir, config.DirName), hub); err != nil {
			return err
		}
	} else if hub.Remote() {
		// On the hub first: refused there, nothing is written here.
		if hub, joined, err = onHub(f, o.Dir, hub, cred); err != nil {
			return err
		}
	}
	root, created, err := store.Init(o.Dir, f.Now)
	if err != nil {
		return err
	}
	if created && hub.Remote() {
		if hub, err = keepCreds(root, hub, cred); err != nil {
			return err
		}
		if err := config.SetStore(root, hub); err != nil {
			return err
		}
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
	if s.OnHub() {
		if _, err := f.State(s); err != nil { // the hub's bus comes with its records
			return err
		}
	}
	s.Notify(bus.Event{Kind: bus.EvInit, Text: root})
	switch {
	case joined:
		fmt.Fprintf(o.IO.Out, "Joined project %s on the hub %s: %s holds this machine's config and logs\n", hub.Project, hub.URL, root)
	case hub.Remote():
		fmt.Fprintf(o.IO.Out, "Initialised %s: records on the hub %s, project %s\nOther machines join it: pm init --store %s --project %s\n",
			root, hub.URL, hub.Project, hub.URL, hub.Project)
	default:
		fmt.Fprintf(o.IO.Out, "Initialised %s\n", root)
	}
	if o.Hub.Creds != "" && hub.Creds == filepath.Join(root, CredsFile) {
		fmt.Fprintf(o.IO.Out, "This machine's credential is kept in %s (out of agents' reach); remove %s\n", hub.Creds, o.Hub.Creds)
	}
	fmt.Fprintf(o.IO.Out, "Next: pm task \"describe the work\"  (agents run: %s; edit %s to change)\n",
		strings.Join(s.Config().Runtime.Exec.Command, " "), s.ConfigPath())
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
