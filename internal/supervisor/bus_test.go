package supervisor

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/state/fsstate"
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
	sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(),
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

// brokenBus publishes but cannot be followed.
type brokenBus struct {
	*bus.Mem
	err error
}

func (b brokenBus) Subscribe(context.Context, bus.Cursor) iter.Seq2[bus.Delivery, error] {
	return func(yield func(bus.Delivery, error) bool) { yield(bus.Delivery{}, b.err) }
}

// A supervisor that cannot follow the bus exits with the error rather than
// run deaf to changes.
func TestExitsWhenTheBusFails(t *testing.T) {
	s := newStore(t)
	boom := errors.New("watcher limit reached")
	s.EventBus = brokenBus{Mem: &bus.Mem{}, err: boom}
	l := fakeHost(t, s)
	owned(t, s) // a crashed owner: something is live after the first reconcile
	sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(),
		// A respawn that never comes due: nothing writes after the test.
		Policy: Policy{CrashLimit: 5, CrashWindow: time.Minute, BaseBackoff: time.Hour, MaxBackoff: time.Hour}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard only
	defer cancel()
	if err := sv.Run(ctx); !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the bus's error", err)
	}
}

// A supervisor that returns waits for its bus follower before it waits for
// a spare being made: the follower asks for a spare on every agent.started,
// and a sync.WaitGroup's Add racing its Wait is a data race (make test's
// -race run found it in TestWakesOnBusEvents). Bounded: 20 runs, each
// ended while agent.started events pour in.
func TestReturnWaitsForTheFollowerBeforeTheSpare(t *testing.T) {
	for range 20 {
		s := newStore(t)
		mem := &bus.Mem{}
		s.EventBus = mem
		l := fakeHost(t, s)
		_, first := owned(t, s)
		sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(),
			Policy: Policy{CrashLimit: 5, CrashWindow: time.Minute, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard only
		ran := make(chan error, 1)
		go func() { ran <- sv.Run(ctx) }()
		for d, err := range mem.Subscribe(ctx, bus.Cursor{}) {
			if err != nil {
				t.Fatal(err)
			}
			if d.Event.Kind == bus.EvAgentRespawned && d.Event.Agent == first.Name {
				break
			}
		}
		pour, poured := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(poured)
			for {
				select {
				case <-pour:
					return
				default:
					s.Notify(bus.Event{Kind: bus.EvAgentStarted, Agent: first.Name, TaskID: first.TaskID})
				}
			}
		}()
		cancel()
		err := <-ran
		close(pour)
		<-poured
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	}
}
