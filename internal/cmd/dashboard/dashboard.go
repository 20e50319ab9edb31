// Package dashboard implements `pm dashboard`.
package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/dashboard"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm dashboard.
type Options struct {
	Addr string
	Open bool
}

// NewCmd builds `pm dashboard`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve the live web dashboard until interrupted (prints its URL with a token)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return run(f, o) },
	}
	c.Flags().StringVar(&o.Addr, "addr", dashboard.DefaultAddr, "host:port to listen on (beyond loopback only with the token)")
	c.Flags().BoolVar(&o.Open, "open", false, "open the page in a browser (xdg-open)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	l, err := f.Launcher(s)
	if err != nil {
		return err
	}
	token, err := newToken()
	if err != nil {
		return err
	}
	sess := &ops.Session{Store: s, State: l.State, Actor: store.Human, Launcher: l, Getenv: f.Getenv}
	srv, err := dashboard.Open(dashboard.Config{Addr: o.Addr, Token: token, Session: sess})
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "pm dashboard: %s\n", srv.URL())
	if o.Open {
		if err := exec.Command("xdg-open", srv.URL()).Start(); err != nil {
			s.Warnf("could not open a browser: %v", err)
		}
	}
	<-f.Context.Done()
	return srv.Close()
}

// newToken is this run's secret: 128 random bits.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
