package supervisor

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/watch"
)

// With the inotify limits used up (injected: the kernel's EMFILE at the
// first watch), the supervisor does not leave: it follows the bus by
// polling, says so in supervisor.json (pm status shows it), and still acts
// on what the bus announces.
func TestInotifyUsedUpDegradesToPolling(t *testing.T) {
	s := newStore(t)
	l := fakeHost(t, s)
	_, first := owned(t, s)
	sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(),
		Policy: Policy{CrashLimit: 5, CrashWindow: time.Minute, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond},
		Watch: func(context.Context, func() []string, func() (bool, error)) error {
			return fmt.Errorf("%w (%w)", watch.ErrLimit, syscall.EMFILE)
		},
		PollEvery: 10 * time.Millisecond,
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang) // hang guard only
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- sv.Run(ctx) }()

	waitEvent(t, s, bus.EvAgentRespawned, first.Name, 1)
	// A second owner crashes with no process the supervisor watched: only
	// the bus announces it, and the polling follower must see it.
	_, second := owned(t, s)
	s.Notify(bus.Event{Kind: bus.EvAgentExited, Agent: second.Name, TaskID: second.TaskID})
	waitEvent(t, s, bus.EvAgentRespawned, second.Name, 1)
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v", err)
	default:
	}
	if in := s.SupervisorInfo(); in == nil || !strings.Contains(in.Polling, "inotify") {
		t.Fatalf("supervisor.json = %+v, want the polling and why", in)
	}
	cancel()
	<-ran
}

// Polling is a fallback, not a state it stays in: once inotify can be had
// again (the other watchers ended), the supervisor watches the bus again
// and supervisor.json (pm status) stops saying it polls.
func TestPollingReturnsToWatching(t *testing.T) {
	s := newStore(t)
	l := fakeHost(t, s)
	owned(t, s)
	var full atomic.Bool
	full.Store(true)
	sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(), Policy: DefaultPolicy,
		Watch: func(ctx context.Context, dirs func() []string, check func() (bool, error)) error {
			if full.Load() {
				return fmt.Errorf("%w (%w)", watch.ErrLimit, syscall.EMFILE)
			}
			return watch.Until(ctx, dirs, check)
		},
		PollEvery: 10 * time.Millisecond,
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang) // hang guard only
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- sv.Run(ctx) }()
	polling := func(want bool) {
		t.Helper()
		err := watch.Until(ctx, func() []string { return []string{s.Root} }, func() (bool, error) {
			in := s.SupervisorInfo()
			return in != nil && in.Pid > 0 && (in.Polling != "") == want, nil
		})
		if err != nil {
			t.Fatalf("supervisor.json polling %v: %v (%+v)", want, err, s.SupervisorInfo())
		}
	}
	polling(true)
	full.Store(false) // the other watchers ended
	polling(false)
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v", err)
	default:
	}
	cancel()
	<-ran
}

// With no watch left for the agent records (inotify used up), a start
// killed between its record and its event is read only at the
// supervisor's last look: it says so in supervisor.json (pm status shows
// it), not only in its log.
func TestAgentRecordsUnwatchedIsShown(t *testing.T) {
	s := newStore(t)
	l := fakeHost(t, s)
	_, first := owned(t, s)
	sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(), Policy: DefaultPolicy,
		WatchRecords: func(context.Context, func(string)) error {
			return fmt.Errorf("%w (%w)", watch.ErrLimit, syscall.EMFILE)
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang) // hang guard only
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- sv.Run(ctx) }()
	waitKnown(t, sv, first.Name)
	if in := s.SupervisorInfo(); in == nil || !strings.Contains(in.Blind, "agent records") || !strings.Contains(in.Blind, "inotify") {
		t.Fatalf("supervisor.json = %+v, want what it cannot watch and why", in)
	}
	cancel()
	<-ran
}
