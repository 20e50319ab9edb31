package supervisor

import (
	"context"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/watch"
)

// Waiters keep the supervisor alive. A person blocked in pm wait (or
// pm chat --follow, pm wait-children, pm log -f) runs no other command, so
// Revive at a command's start is not enough: a supervisor killed while they
// wait would leave them waiting on nothing. Keep watches the live
// supervisor's process (a pidfd: the kernel wakes it when it dies) and
// starts another when one is wanted and none is live; while none is wanted
// it waits for the marker (a file event in the state directory).

// keepPatience bounds how long Keep waits for a supervisor it started to
// take the lock before it looks again (and starts another if that one died
// at once).
const keepPatience = 10 * time.Second

// keepPoll is the check interval when file events or pidfds cannot be had
// (inotify used up): bounded, and only then.
const keepPoll = time.Second

// Keep keeps a supervisor running while ctx lasts, whenever one is wanted.
// It returns when ctx ends, or when a supervisor cannot be started (the
// error is warned through the store: the waiter goes on waiting).
func Keep(ctx context.Context, l *agent.Launcher) {
	s := l.Store
	root := func() []string { return []string{s.Root} }
	until := func(ctx context.Context, check func() bool) {
		_ = watch.UntilOrPoll(ctx, root, func() (bool, error) { return check(), nil }, keepPoll, nil)
	}
	for ctx.Err() == nil {
		switch {
		case s.SupervisorDown():
			if err := start(l); err != nil {
				s.Warnf("cannot start a supervisor: %v", err)
				return
			}
			// Until it holds the lock (it writes supervisor.json then), or
			// nobody wants one any more.
			wctx, cancel := context.WithTimeout(ctx, keepPatience)
			until(wctx, func() bool { return !s.SupervisorDown() })
			cancel()
		case s.SupervisorWanted():
			in := s.SupervisorInfo()
			if in == nil || !s.SupervisorLive() {
				continue // it went between the two looks: SupervisorDown says so next
			}
			if err := driver.WaitPid(ctx, in.Pid, in.PidStart); err != nil && ctx.Err() == nil {
				// No pidfd to be had: look at it every keepPoll instead.
				_ = watch.Poll(ctx, keepPoll, func() (bool, error) { return !s.SupervisorLive(), nil })
			}
		default:
			until(ctx, s.SupervisorWanted)
		}
	}
}
