package supervisor

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// placedOn records an active task whose owner (llm runtime, never
// started) is placed on worker w, and returns the owner's name.
func placedOn(t *testing.T, r *rig, w string) string {
	t.Helper()
	tk, err := task.Create(r.s, r.l, store.Human, task.Spec{Description: "placed on " + w, Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.UpdateAgent(tk.Owner, func(a *store.Agent) error { a.Runtime, a.Worker = "llm", w; return nil }); err != nil {
		t.Fatal(err)
	}
	return tk.Owner
}

// A gone worker's agent whose old host in fact lives and keeps its lease
// (its worker's key expired, its host did not) is claimed only once its
// lease is free: while the claim waits for it, it holds none of the
// claimant's places. A worker of capacity 1 still starts another agent
// placed on it; before, the claim reserved the place first and held it
// for as long as the old host lived.
func TestAClaimWaitingForALeaseHoldsNoPlace(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	_, gone := r.startOwner(t) // its host lives on, holding its lease
	if _, err := r.s.UpdateAgent(gone.Name, func(a *store.Agent) error { a.Worker = "gone"; return nil }); err != nil {
		t.Fatal(err)
	}
	placed := placedOn(t, r, "w1")
	sv, hub := workerOn(t, r, r.fake, "w1", 1)
	hub.held[gone.Name] = true
	started := len(r.fake.Started())

	sv.takeOver(hub, hub) // its claim waits for the live host's lease
	if _, err := sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	sv.starting.Wait()
	if a := r.agent(t, placed); a.Status != store.AgentRunning || len(r.fake.Started()) != started+1 {
		t.Fatalf("the agent placed on a worker of capacity 1 is %s (%d starts) while a claim waits for another's lease", a.Status, len(r.fake.Started())-started)
	}
	if a := r.agent(t, gone.Name); a.Worker != "gone" {
		t.Fatalf("the live host's agent moved to %s", a.Worker)
	}

	// The old host dies and its lease goes: the claim takes the lease,
	// finds no place (the other agent holds the one), lets the lease go
	// and moves nothing.
	r.fake.Exit(gone.Handle, 128+9)
	hub.release(gone.Name)
	sv.claimsRun.Wait()
	hub.mu.Lock()
	held := hub.held[gone.Name]
	hub.mu.Unlock()
	if a := r.agent(t, gone.Name); a.Worker != "gone" || held {
		t.Fatalf("with no place free: moved to %q, lease still held %v", a.Worker, held)
	}

	// The agent placed here ends (pm kill): its place goes to the claim.
	now := time.Now().UTC()
	p := r.agent(t, placed)
	if _, err := r.s.UpdateAgent(placed, func(a *store.Agent) error { a.Status, a.EndedAt = store.AgentKilled, &now; return nil }); err != nil {
		t.Fatal(err)
	}
	r.fake.Exit(p.Handle, 128+15)
	if _, err := sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	sv.takeOver(hub, hub)
	sv.claimsRun.Wait()
	sv.mu.Lock()
	_, respawn := sv.pending[gone.Name]
	sv.mu.Unlock()
	if a := r.agent(t, gone.Name); a.Worker != "w1" || !respawn {
		t.Fatalf("once a place freed: on %q, respawn due %v; want moved here and respawned", a.Worker, respawn)
	}
}

// hungProbe is the fake driver whose Alive of one run hangs until the
// test opens the gate (a probe of a host that does not answer).
type hungProbe struct {
	*drivertest.Driver
	hung driver.Handle
	gate chan struct{}
}

func (p *hungProbe) Alive(h driver.Handle) bool {
	if h == p.hung {
		<-p.gate
	}
	return p.Driver.Alive(h)
}

// A worker counts its places from what it knows (the hosts it watches,
// its starts, claims and respawns), not by probing every host while it
// holds its lock: a probe that hangs stalls neither a reservation nor
// what the worker says in its registration.
func TestPlacesAreCountedWithoutAProbe(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	_, owner := r.startOwner(t)
	if _, err := r.s.UpdateAgent(owner.Name, func(a *store.Agent) error { a.Worker = "w1"; return nil }); err != nil {
		t.Fatal(err)
	}
	p := &hungProbe{Driver: r.fake, gate: make(chan struct{})}
	defer close(p.gate)
	sv, _ := workerOn(t, r, p, "w1", 2)
	sv.watchExit(owner.Name, owner.Handle) // as a reconcile does for a live host
	p.hung = owner.Handle
	type answer struct {
		ok, full bool
		says     state.Worker
	}
	done := make(chan answer, 1)
	go func() {
		ok, full := sv.reserve("start other_0001")
		done <- answer{ok, full, sv.workerSays(2)}
	}()
	select {
	case got := <-done:
		if !got.ok || got.full || !slices.Equal(got.says.Running, []string{owner.Name}) || !slices.Equal(got.says.Taking, []string{"other_0001"}) {
			t.Fatalf("reserve ok %v full %v, registration %+v: want a place, %s running and other_0001 taking", got.ok, got.full, got.says, owner.Name)
		}
	case <-time.After(hang):
		t.Fatal("a reservation waited on a host's probe")
	}
}

// A claim that moves an agent never started hands its place to the
// agent's start, unless a start of it is in flight already (the worker's
// reconcile saw it placed here first): then it starts nothing, and the
// start in flight keeps its own reservation.
func TestAClaimStartsNothingWhileAStartIsInFlight(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	name := placedOn(t, r, "gone")
	sv, hub := workerOn(t, r, r.fake, "w1", 0)
	sv.claiming["start "+name] = true // the reconcile's start, in flight
	sv.claim(hub, r.agent(t, name))
	sv.starting.Wait()
	if a := r.agent(t, name); a.Worker != "w1" {
		t.Fatalf("not moved: on %q", a.Worker)
	}
	if n := len(r.fake.Started()); n != 0 {
		t.Fatalf("the claim started the agent (%d starts) beside the start in flight", n)
	}
	sv.mu.Lock()
	kept := sv.claiming["start "+name]
	sv.mu.Unlock()
	if !kept {
		t.Fatal("the start in flight lost its reservation")
	}
}

// A worker's way out waits for its claims in flight, and for the starts
// they hand their agents to, before it returns (then its registration
// goes): no start begins after it, and none races the wait for them.
func TestTheWayOutWaitsForClaimsThenStarts(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	name := placedOn(t, r, "gone")
	sv, hub := workerOn(t, r, r.fake, "w1", 1)
	hub.holding = make(chan string)
	sv.takeOver(hub, hub)
	if got := <-hub.holding; got != name { // the claim holds the lease: it moves the agent next
		t.Fatalf("lease taken for %s, want %s", got, name)
	}
	sv.wayOut()
	if a := r.agent(t, name); a.Worker != "w1" || a.Status != store.AgentRunning || len(r.fake.Started()) != 1 {
		t.Fatalf("after the way out: on %q, %s, %d starts; want the claim and its start finished", a.Worker, a.Status, len(r.fake.Started()))
	}
}

// failedWait is a driver whose Wait fails at once while the run goes on
// (proc.Wait out of file descriptors, say); probed says when Alive is
// asked about the run after that.
type failedWait struct {
	*drivertest.Driver
	h      driver.Handle
	probed chan struct{}
}

func (d *failedWait) Wait(ctx context.Context, h driver.Handle) (driver.ExitStatus, error) {
	if h == d.h {
		return driver.ExitStatus{}, errors.New("wait: too many open files")
	}
	return d.Driver.Wait(ctx, h)
}

func (d *failedWait) Alive(h driver.Handle) bool {
	alive := d.Driver.Alive(h)
	if h == d.h {
		select {
		case d.probed <- struct{}{}:
		default:
		}
	}
	return alive
}

// A host whose exit watch fails while it still runs keeps its place: its
// worker does not count it gone (and take one agent more than its
// capacity), nor wake itself to watch it again and again.
func TestAFailedExitWatchKeepsThePlace(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	_, owner := r.startOwner(t)
	d := &failedWait{Driver: r.fake, h: owner.Handle, probed: make(chan struct{}, 1)}
	sv, _ := workerOn(t, r, d, "w1", 1)
	sv.watchExit(owner.Name, owner.Handle)
	select {
	case <-d.probed: // the watcher asked whether the run still runs
	case <-sv.wake: // the watcher took the failed wait for an exit
	case <-time.After(hang):
		t.Fatal("the exit watcher neither probed nor woke the worker")
	}
	sv.mu.Lock()
	watched := sv.watching[owner.Name] == owner.Handle
	sv.mu.Unlock()
	if !watched {
		t.Fatal("a host still running was forgotten after its exit watch failed: its place counts as free")
	}
	if ok, _ := sv.reserve("start other_0001"); ok {
		t.Fatal("a capacity-1 worker reserved a second place beside a host still running")
	}
}

// An owner that exited 0 on a worker now gone, its task rejected since
// its start (a pm reject that kept a conflict, say), is still to run: a
// worker claims it and moves it here, where its start follows. Before,
// claims took only wanted or never-started agents, so the rejection
// stayed with the gone worker.
func TestARejectedOwnerOfAGoneWorkerIsClaimed(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	name := placedOn(t, r, "gone")
	zero := 0
	a, err := r.s.UpdateAgent(name, func(a *store.Agent) error {
		a.Status, a.ExitCode = store.AgentExited, &zero
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.UpdateTask(a.TaskID, func(tk *store.Task) error { tk.Rejections = a.Rejections + 1; return nil }); err != nil {
		t.Fatal(err)
	}
	sv, hub := workerOn(t, r, r.fake, "w1", 0)
	sv.claim(hub, r.agent(t, name))
	if got := r.agent(t, name); got.Worker != "w1" {
		t.Fatalf("a rejected owner of a gone worker stayed on %q, want moved to w1", got.Worker)
	}
}
