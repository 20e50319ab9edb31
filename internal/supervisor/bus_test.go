package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/store"
)

// The supervisor wakes on the bus (here the in-memory one): a crash that no
// pidfd reports and only an event announces is respawned.
func TestWakesOnBusEvents(t *testing.T) {
	s := newStore(t)
	mem := &bus.Mem{}
	s.EventBus = mem
	l := fakeHost(t, s)
	_, first := owned(t, s)
	sv := &Supervisor{Store: s, Launcher: l, Log: quiet(),
		Policy: Policy{CrashLimit: 5, CrashWindow: time.Minute, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard only
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- sv.Run(ctx) }()

	events := mem.Subscribe(ctx, bus.Cursor{})
	waitFor := func(kind bus.Kind, agent string) {
		t.Helper()
		for d, err := range events {
			if err != nil {
				t.Fatalf("waiting for %s of %s: %v", kind, agent, err)
			}
			if d.Event.Kind == kind && d.Event.Agent == agent {
				return
			}
		}
	}
	// The first owner is respawned at the first reconcile and keeps the
	// supervisor running (a live process).
	waitFor(bus.EvAgentRespawned, first.Name)
	// A second owner crashes without a process the supervisor watched: its
	// record changes silently, then the bus announces it.
	_, second := owned(t, s)
	s.Notify(bus.Event{Kind: bus.EvAgentExited, Agent: second.Name, TaskID: second.TaskID})
	waitFor(bus.EvAgentRespawned, second.Name)
	a, err := s.Agent(second.Name)
	if err != nil || a.Status != store.AgentRunning || a.Restarts != 1 {
		t.Fatalf("second owner after the wake: %+v, %v", a, err)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
