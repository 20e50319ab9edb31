package supervisor

import (
	"context"
	"fmt"
	"strings"
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
