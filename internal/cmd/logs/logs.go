// Package logs implements `pm logs`.
package logs

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
)

// Options are the inputs of pm logs.
type Options struct {
	Name   string
	Follow bool
}

// NewCmd builds `pm logs`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print an agent's log (its process output); -f follows it",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Name = args[0]
			return run(f, o)
		},
	}
	c.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing as the log grows (until the agent ends)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	if !ids.ValidAgentName(o.Name) {
		return errs.Usagef("see pm agents --all", "%q is not an agent name", o.Name)
	}
	if _, err := s.Agent(o.Name); err != nil {
		return err
	}
	path := s.LogPath(o.Name)
	var off int64
	copyNew := func() error {
		fh, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer fh.Close()
		if _, err := fh.Seek(off, io.SeekStart); err != nil {
			return err
		}
		n, err := io.Copy(f.IO.Out, fh)
		off += n
		return err
	}
	if !o.Follow {
		return copyNew()
	}
	dirs := func() []string { return []string{s.LogsDir(), s.AgentDir(o.Name)} }
	return watch.Until(f.Context, dirs, func() (bool, error) {
		if err := copyNew(); err != nil {
			return false, err
		}
		a, err := s.Agent(o.Name)
		if err != nil {
			return false, err
		}
		ended := a.Status != store.AgentRunning && a.Status != store.AgentPending
		if ended {
			return true, copyNew()
		}
		return false, nil
	})
}
