// Package logs implements `pm logs`.
package logs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
	"github.com/plasmodium/pm/internal/watch"
)

// Options are the inputs of pm logs.
type Options struct {
	Name   string
	Follow bool
	JSON   bool
}

// NewCmd builds `pm logs`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:               "logs NAME",
		Short:             "Print an agent's log (its process output); -f follows it",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteAgents(f),
		RunE: func(c *cobra.Command, args []string) error {
			o.Name = args[0]
			return run(f, o)
		},
	}
	c.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing as the log grows (until the agent ends); waits for an agent that has not started")
	c.Flags().BoolVar(&o.JSON, "json", false, `print the output as JSON lines {"agent","offset","text"}`)
	c.Example = `  pm logs birch_0405
  pm logs birch_0405 -f      # follow it, from before it starts until it ends`
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	st, err := f.State(s)
	if err != nil {
		return err
	}
	o.Name = strings.TrimPrefix(o.Name, "@") // as every view prints it
	if !ids.ValidAgentName(o.Name) {
		return errs.Usagef("see pm agents --all", "%q is not an agent name", o.Name)
	}
	a, err := st.Agent(o.Name)
	if err != nil {
		return err
	}
	if o.Follow && a.Status == store.AgentPending {
		if a.Runtime == config.RuntimeNone {
			return errs.Statef("a person or script acts as @"+o.Name+" with PM_AGENT="+o.Name, "@%s runs on runtime none: it never starts a process, so it has no log", o.Name)
		}
		if err := neverStarts(s, st, a); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "-- @%s has not started yet (pm status %s says why); waiting\n", o.Name, a.TaskID)
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
		var n int64
		if o.JSON {
			n, err = copyJSON(f.IO.Out, fh, o.Name, off)
		} else {
			n, err = io.Copy(f.IO.Out, fh)
		}
		off += n
		return err
	}
	if !o.Follow {
		return copyNew()
	}
	// The log and the agent's record; while the agent is pending, the bus
	// (events.jsonl) too, for what happens to the tasks its task waits on.
	pending := a.Status == store.AgentPending
	dirs := func() []string {
		if pending {
			return []string{s.LogsDir(), s.AgentDir(o.Name), filepath.Dir(s.EventsPath())}
		}
		return []string{s.LogsDir(), s.AgentDir(o.Name)}
	}
	return watch.Until(f.Context, dirs, func() (bool, error) {
		if err := copyNew(); err != nil {
			return false, err
		}
		a, err := st.Agent(o.Name)
		if err != nil {
			return false, err
		}
		ended := a.Status != store.AgentRunning && a.Status != store.AgentPending
		if ended {
			return true, copyNew()
		}
		if pending = a.Status == store.AgentPending; pending {
			return false, neverStarts(s, st, a)
		}
		return false, nil
	})
}

// neverStarts refuses to wait for an owner whose task is stalled before it
// started (a blocker was killed): nothing will ever start it.
func neverStarts(s *store.Store, st state.State, a *store.Agent) error {
	if !a.IsOwner() || a.TaskID == "" {
		return nil
	}
	t, err := st.Task(a.TaskID)
	if err != nil || t.Status != store.TaskBlocked {
		return nil
	}
	if h := task.HealthOf(s, st, t, nil); h.State == task.StateStalled {
		return errs.Statef(h.Next, "@%s will not start: task %s %s", a.Name, t.ID, h.Reason)
	}
	return nil
}

// copyJSON writes what r holds as JSON lines, one per read chunk, each with
// its offset in the log: raw process output need not be text or whole lines.
func copyJSON(w io.Writer, r io.Reader, agent string, off int64) (int64, error) {
	enc := json.NewEncoder(w)
	buf := make([]byte, 32<<10)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			chunk := struct {
				Agent  string `json:"agent"`
				Offset int64  `json:"offset"`
				Text   string `json:"text"`
			}{agent, off + total, strings.ToValidUTF8(string(buf[:n]), "\uFFFD")}
			if werr := enc.Encode(chunk); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}
