// Package supervise implements the hidden `pm supervise`: the daemon that
// respawns crashed agents. Commands that start agents start it on demand.
package supervise

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/notify"
	"github.com/plasmodium/pm/internal/supervisor"
)

// NewCmd builds `pm supervise`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "supervise",
		Short:  "Keep agents alive until nothing is live (started by pm)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			// The supervisor holds the environment every host it starts gets,
			// the provider key among it: no other process of the user (an
			// exec agent) may read it through /proc/PID/environ.
			driver.NotDumpable()
			// Revived by a pm command an agent's host ran, it was forked in
			// that agent's run: out of its cgroups, or the sweep of that run
			// once it dies (cgroup.kill) would end the supervisor with it.
			leaveErr := driver.LeaveRun()
			s, err := f.Store()
			if err != nil {
				return err
			}
			l, err := f.Launcher(s)
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(f.IO.ErrOut, nil))
			if leaveErr != nil {
				log.Warn("cannot leave the agent run's cgroup it was started in", "err", leaveErr)
			}
			sv := &supervisor.Supervisor{
				Store: s, State: l.State, Launcher: l, Policy: supervisor.DefaultPolicy,
				Log:        log,
				RaiseHuman: f.RaiseHuman(s, l.State),
			}
			return withNotifier(f.Context, &notify.Notifier{Store: s, State: l.State, Log: log}, sv.Run)
		},
	}
}

// withNotifier runs the notifier beside the supervisor: it lives exactly as
// long as agents do. On the way out it catches up with the bus, so the
// event that let the supervisor go (the last task done) is still notified.
func withNotifier(ctx context.Context, n *notify.Notifier, run func(context.Context) error) error {
	nctx, stop := context.WithCancel(ctx)
	followed := make(chan error, 1)
	go func() { followed <- n.Follow(nctx) }()
	err := run(ctx)
	stop()
	if ferr := <-followed; ferr != nil {
		n.Log.Error("notify", "err", ferr)
	}
	if ctx.Err() == nil {
		if cerr := n.CatchUp(ctx); cerr != nil {
			n.Log.Error("notify: catch up", "err", cerr)
		}
	}
	return err
}
