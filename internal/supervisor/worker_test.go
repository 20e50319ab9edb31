package supervisor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// fakeHub is a project's records with a hub's agent leases and workers: a
// lease is held until released, and WaitAgentFree runs the test's race
// (onFree) before it returns, once, then waits while the lease is held
// (woken by a release, or its context's end). Its live workers are live.
type fakeHub struct {
	state.State
	mu      sync.Mutex
	held    map[string]bool
	onFree  func(name string)
	freed   chan struct{} // closed (and made again) at each release
	live    []state.Worker
	holding chan string // when set, told each lease taken
}

func (f *fakeHub) HoldAgent(_ context.Context, name, _ string) (state.AgentLease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held[name] {
		return nil, state.ErrLeaseHeld
	}
	f.held[name] = true
	if f.holding != nil {
		f.holding <- name
	}
	return fakeHubLease{f, name}, nil
}

func (f *fakeHub) WaitAgentFree(ctx context.Context, name string) error {
	f.mu.Lock()
	race := f.onFree
	f.onFree = nil
	f.mu.Unlock()
	if race != nil {
		race(name)
	}
	for {
		f.mu.Lock()
		if f.freed == nil {
			f.freed = make(chan struct{})
		}
		held, freed := f.held[name], f.freed
		f.mu.Unlock()
		if !held {
			return nil
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *fakeHub) LeaseTTL() time.Duration { return time.Second }

// release lets name's lease go (its holder ended), waking the waiters.
func (f *fakeHub) release(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, name)
	if f.freed != nil {
		close(f.freed)
	}
	f.freed = make(chan struct{})
}

func (f *fakeHub) Workers() ([]state.Worker, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.live), nil
}

func (f *fakeHub) RegisterWorker(context.Context, state.Worker) (state.WorkerRegistration, error) {
	return nil, errors.New("fakeHub: no registration")
}

func (f *fakeHub) WatchWorkers(ctx context.Context, _ func()) error {
	<-ctx.Done()
	return nil
}

type fakeHubLease struct {
	f    *fakeHub
	name string
}

func (fakeHubLease) Renew(context.Context) error         { return nil }
func (fakeHubLease) Fence(context.Context, string) error { return nil }
func (fakeHubLease) OnRefused(func(error))               {}
func (l fakeHubLease) Release(context.Context) error {
	l.f.release(l.name)
	return nil
}

// workerOn is worker name's supervisor on r's store, its records a fakeHub,
// with room for capacity agents (0: no bound).
func workerOn(t *testing.T, r *rig, d driver.Driver, name string, capacity int) (*Supervisor, *fakeHub) {
	t.Helper()
	hub := &fakeHub{State: fsstate.New(r.s), held: map[string]bool{}, live: []state.Worker{{Name: name, Capacity: capacity}}}
	l := &agent.Launcher{Store: r.s, State: hub, Exe: "pm", Driver: d, Worker: name}
	sv := &Supervisor{Store: r.s, State: hub, Launcher: l, Driver: d, Log: quiet(), Worker: name,
		Policy: Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour}}
	t.Cleanup(func() {
		sv.wayOut()
		stopTimers(sv)
	})
	sv.init(context.Background())
	sv.capacity = capacity
	return sv, hub
}

// A worker's claim on a gone worker's agent re-checks, in the record's
// compare-and-set, everything it decided on: whatever changed between its
// look at the record and the move (while it waited for the lease: the
// agent killed, started again by its old worker come back, claimed by
// another worker) leaves the record as that change left it.
func TestClaimRechecksInTheCompareAndSet(t *testing.T) {
	for _, tc := range []struct {
		name       string
		race       func(a *store.Agent) // what happens while the lease is waited for
		wantWorker string
	}{
		{"nothing meanwhile: moved here", nil, "w1"},
		{"killed meanwhile", func(a *store.Agent) {
			now := time.Now().UTC()
			a.Status, a.EndedAt = store.AgentKilled, &now
		}, "gone"},
		{"started again by its old worker, back", func(a *store.Agent) {
			a.Handle = driver.Handle{Pid: 4242, PidStart: 7}
		}, "gone"},
		{"claimed by another worker", func(a *store.Agent) { a.Worker = "w2" }, "w2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, DefaultPolicy)
			_, owner := r.startOwner(t)
			seen, err := r.s.UpdateAgent(owner.Name, func(a *store.Agent) error { a.Worker = "gone"; return nil })
			if err != nil {
				t.Fatal(err)
			}
			r.fake.Exit(owner.Handle, 128+9) // the gone worker's host died with it
			sv, hub := workerOn(t, r, r.fake, "w1", 0)
			if tc.race != nil {
				hub.onFree = func(name string) {
					if _, err := r.s.UpdateAgent(name, func(a *store.Agent) error { tc.race(a); return nil }); err != nil {
						t.Error(err)
					}
				}
			}
			sv.claim(hub, seen)
			got := r.agent(t, owner.Name)
			if got.Worker != tc.wantWorker {
				t.Fatalf("placed on %q after the claim, want %q (record: status %s, handle %v)", got.Worker, tc.wantWorker, got.Status, got.Handle)
			}
			sv.mu.Lock()
			_, respawn := sv.pending[owner.Name]
			sv.mu.Unlock()
			if respawn != (tc.wantWorker == "w1") {
				t.Fatalf("respawn scheduled %v, want %v", respawn, tc.wantWorker == "w1")
			}
		})
	}
}

// A worker runs at most its capacity of agents: of two placed on a worker
// with one place, one starts and the other waits (the registration says
// so, and placement counts it); when the first ends, the second starts.
func TestWorkerCapacity(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	var names []string
	for _, title := range []string{"first", "second"} {
		tk, err := task.Create(r.s, r.l, store.Human, task.Spec{Description: title, Runtime: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.UpdateAgent(tk.Owner, func(a *store.Agent) error { a.Runtime, a.Worker = "llm", "w1"; return nil }); err != nil {
			t.Fatal(err)
		}
		names = append(names, tk.Owner)
	}
	sv, _ := workerOn(t, r, r.fake, "w1", 1)
	if _, err := sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	sv.starting.Wait()
	if n := len(r.fake.Started()); n != 1 {
		t.Fatalf("a worker of capacity 1 started %d agents", n)
	}
	var first, second string
	for _, n := range names {
		if r.agent(t, n).Status == store.AgentRunning {
			first = n
		} else {
			second = n
		}
	}
	if first == "" || second == "" {
		t.Fatalf("want one running and one waiting of %v", names)
	}
	w := sv.workerSays(1)
	if !slices.Equal(w.Waiting, []string{second}) || w.Free() != -1 {
		t.Fatalf("registration %+v (free %d), want %s waiting and free -1", w, w.Free(), second)
	}
	// More reconciles change nothing while the place is held.
	if _, err := sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	sv.starting.Wait()
	if n := len(r.fake.Started()); n != 1 {
		t.Fatalf("a worker of capacity 1 started %d agents", n)
	}
	// The first ends (pm kill): its place goes to the second.
	a := r.agent(t, first)
	now := time.Now().UTC()
	if _, err := r.s.UpdateAgent(first, func(a *store.Agent) error { a.Status, a.EndedAt = store.AgentKilled, &now; return nil }); err != nil {
		t.Fatal(err)
	}
	r.fake.Exit(a.Handle, 128+15)
	if _, err := sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	sv.starting.Wait()
	if n := len(r.fake.Started()); n != 2 || r.agent(t, second).Status != store.AgentRunning {
		t.Fatalf("after the first ended: %d starts, second %s", n, r.agent(t, second).Status)
	}
	if w := sv.workerSays(1); len(w.Waiting) != 0 || !slices.Equal(w.Running, []string{second}) {
		t.Fatalf("registration %+v, want %s running and none waiting", w, second)
	}
}

// gatedStop holds every Stop of a live run until the test opens the
// gate, and says so on entered; the Stop of a dead run (the sweep of what
// it left) passes.
type gatedStop struct {
	*drivertest.Driver
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedStop) Stop(ctx context.Context, h driver.Handle) (bool, error) {
	if g.Driver.Alive(h) {
		g.entered <- struct{}{}
		<-g.gate
	}
	return g.Driver.Stop(ctx, h)
}

// A host whose agent was placed on another worker is stopped like any
// other (stopHost): noted as being stopped (the supervisor stays live for
// it) and stopped once, however many reconciles see it meanwhile.
func TestMovedAwayStopsOnce(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	_, owner := r.startOwner(t)
	if _, err := r.s.UpdateAgent(owner.Name, func(a *store.Agent) error { a.Worker = "w1"; return nil }); err != nil {
		t.Fatal(err)
	}
	g := &gatedStop{Driver: r.fake, entered: make(chan struct{}, 8), gate: make(chan struct{})}
	sv, _ := workerOn(t, r, g, "w1", 0)
	if live, err := sv.reconcile(); err != nil || !live {
		t.Fatalf("reconcile: live %v, %v", live, err)
	}
	// Taken over by w2 (its claim clears the run).
	if _, err := r.s.UpdateAgent(owner.Name, func(a *store.Agent) error { a.Worker, a.Handle = "w2", driver.Handle{}; return nil }); err != nil {
		t.Fatal(err)
	}
	sv.recordChanged(owner.Name)
	if _, err := sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.entered:
	case <-time.After(hang):
		t.Fatal("the moved agent's host was never stopped")
	}
	sv.mu.Lock()
	being := sv.stopping[owner.Name]
	sv.mu.Unlock()
	if being != owner.Handle {
		t.Fatalf("a stop in flight is not noted (stopping %v, want %v)", being, owner.Handle)
	}
	sv.recordChanged(owner.Name) // another event names it meanwhile
	live, err := sv.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if !live {
		t.Fatal("not live while a host is being stopped")
	}
	select {
	case <-sv.wake:
	default:
	}
	close(g.gate)
	select {
	case <-sv.wake: // the stop ended
	case <-time.After(hang):
		t.Fatal("the stop never ended")
	}
	select {
	case <-g.entered:
		t.Fatal("the live host was stopped twice")
	default:
	}
	if a := r.agent(t, owner.Name); a.Worker != "w2" || a.Status != store.AgentRunning {
		t.Fatalf("the stop wrote another worker's record: worker %s, status %s", a.Worker, a.Status)
	}
}
