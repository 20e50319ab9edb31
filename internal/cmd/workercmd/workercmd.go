// Package workercmd implements `pm worker` (run this machine's share of a
// hub project's agents, in the foreground, like pm hub) and `pm workers`
// (list the registered workers). docs/distributed.md, "Workers".
package workercmd

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/supervisor"
)

// validName is a worker's name: letters, digits, and single dots, dashes
// or underscores between them (a hostname is one).
var validName = regexp.MustCompile(`^[A-Za-z0-9]+([._-][A-Za-z0-9]+)*$`)

// NewWorkerCmd builds `pm worker`.
func NewWorkerCmd(f *cmdutil.Factory) *cobra.Command {
	var name string
	var capacity int
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run the agents of a hub project placed on this machine (foreground)",
		Long: `Register this machine on the project's hub and run the agents placed on it
(pm task --on NAME, or the worker with the most free capacity), until
interrupted: it starts them, respawns the crashed ones, stops the ones no
longer wanted (pm kill and pm reset from any machine), and takes over the
agents of a worker that is gone once their leases expire.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if name == "" {
				name, _ = os.Hostname()
			}
			if !validName.MatchString(name) || len(name) > 64 {
				return errs.Usagef("pm worker --name NAME (letters, digits, and . - _ between them)", "worker name %q is not one", name)
			}
			if capacity < 1 {
				return errs.Usagef("pm worker --capacity N, N at least 1", "--capacity %d", capacity)
			}
			driver.NotDumpable() // it holds the environment its hosts get, keys among it
			s, err := f.Store()
			if err != nil {
				return err
			}
			l, err := f.Launcher(s)
			if err != nil {
				return err
			}
			l.Worker = name
			log := slog.New(slog.NewTextHandler(f.IO.ErrOut, nil)).With("worker", name)
			sv := &supervisor.Supervisor{Store: s, State: l.State, Launcher: l, Policy: supervisor.DefaultPolicy,
				Log: log, RaiseHuman: f.RaiseHuman(s, l.State), Worker: name}
			fmt.Fprintf(f.IO.Out, "pm worker %s: capacity %d, project %s on %s\n", name, capacity, s.Config().Store.Project, s.Config().Store.URL)
			return sv.RunWorker(f.Context, capacity)
		},
	}
	c.Flags().StringVar(&name, "name", "", "this worker's name (default: the hostname)")
	c.Flags().IntVar(&capacity, "capacity", runtime.NumCPU(), "how many agents it runs")
	return c
}

// NewWorkersCmd builds `pm workers`.
func NewWorkersCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "workers",
		Short: "List the workers registered on the project's hub",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := f.Store()
			if err != nil {
				return err
			}
			st, err := f.State(s)
			if err != nil {
				return err
			}
			ws, ok := state.WorkersOf(st)
			if !ok {
				return errs.Usagef("make the project on a hub (pm init --store nats://HOST:4222)", "this project has no workers: its records are in %s", s.Root)
			}
			list, err := ws.Workers()
			if err != nil {
				return err
			}
			if list == nil {
				list = []state.Worker{}
			}
			if asJSON {
				return cmdutil.PrintJSON(f.IO.Out, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(f.IO.Out, "no worker registered: agents run on the machine whose pm starts them (pm worker registers one)")
				return nil
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "WORKER\tCAPACITY\tRUNNING\tWAITING\tLAST SEEN\tAGENTS")
			for _, w := range list {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s ago\t%s\n", w.Name, w.Capacity, len(w.Running), len(w.Waiting),
					time.Since(w.LastSeen).Round(time.Second), agentsOf(w))
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print them as JSON")
	return c
}

// agentsOf lists what w runs, then what it is starting or taking over,
// then what waits there for a free place.
func agentsOf(w state.Worker) string {
	out := slices.Clone(w.Running)
	for _, n := range w.Taking {
		out = append(out, n+"(starting)")
	}
	for _, n := range w.Waiting {
		out = append(out, n+"(waiting)")
	}
	return strings.Join(out, " ")
}
