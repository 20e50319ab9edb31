package supervisor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/natsx/lease"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// A worker (pm worker) is this supervisor on one machine of a hub
// project, for the agents placed on it (Supervisor.Worker): the same
// reconcile (wanted agents respawned after a crash, with the crash limit;
// unwanted ones stopped, so pm kill and pm reset from any machine end the
// host here), plus what a machine among several needs:
//   - it is registered on the hub while it runs (state.Workers: a key
//     with the leases' TTL, renewed every third of it, saying its
//     capacity and the agents it runs);
//   - it starts the agents placed on it that are to run (pending, their
//     task or room live): a command on another machine records them and
//     leaves the start to it;
//   - it takes over the agents of a worker that is gone (its key expired):
//     once an agent's lease is free (the lost host's expired: woken by the
//     lease bucket's watch), it takes the lease (of two workers racing,
//     one wins), moves the agent's placement to itself in the record, and
//     lets go of the lease for the host it starts, which takes it again;
//   - it never leaves while it runs (a supervisor leaves when nothing is
//     live) and is woken by the bus and by the workers' keys, never a sleep.

// RunWorker runs sv as worker sv.Worker with room for capacity agents,
// until ctx ends.
func (sv *Supervisor) RunWorker(ctx context.Context, capacity int) error {
	ws, ok := state.WorkersOf(sv.State)
	leases, lok := state.AgentLeasesOf(sv.State)
	if !ok || !lok {
		return errs.Usagef("make the project on a hub (pm init --store nats://HOST:4222) or join one",
			"pm worker runs the agents of a project on a hub; this project's records are in %s", sv.Store.Root)
	}
	unlock, got, err := sv.Store.LockSupervisor(lockPatience)
	if err != nil {
		return err
	}
	if !got {
		return errs.Statef("run one worker per directory joined to the project (pm init --store URL --project P in another)",
			"a supervisor or worker already runs for %s", sv.Store.Root)
	}
	defer func() { _ = unlock() }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sv.init(ctx)
	sv.capacity = capacity
	reg, err := ws.RegisterWorker(ctx, sv.workerSays(capacity))
	if err != nil {
		return err
	}
	// Released after the renewals have ended (kept.Stop, deferred below):
	// the registration it releases is the last one made.
	defer func() { _ = reg.Release(context.WithoutCancel(ctx)) }()
	_, end, err := sv.Store.Bus().Tail(0)
	if err != nil {
		return err
	}
	subErr := make(chan error, 1)
	go func() { subErr <- sv.follow(ctx, end) }()
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- ws.WatchWorkers(ctx, func() {
			sv.mu.Lock()
			sv.rescan = true // a worker gone: read every record for its agents
			sv.mu.Unlock()
			sv.poke()
		})
	}()
	kept := sv.keepRegistered(ctx, ws, &reg, capacity, leases.LeaseTTL())
	defer kept.Stop()
	// First on the way out (deferred last): no claim or start is left
	// running once the registration goes.
	defer sv.wayOut()
	sv.Log.Info("worker started", "name", sv.Worker, "capacity", capacity, "pid", os.Getpid())
	for {
		if _, err := sv.reconcile(); err != nil {
			sv.Log.Error("reconcile", "err", err)
		}
		sv.takeOver(ws, leases)
		select {
		case <-ctx.Done():
			return nil
		case <-sv.wake:
		case err := <-subErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("follow the bus: %w", err)
		case err := <-watchErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch the workers: %w", err)
		}
	}
}

// workerSays is this worker's registration as it stands: the agents
// its live hosts run, those it is starting or taking over, and those
// placed on it that wait for a free place. Placement by free capacity
// counts all three (state.Worker.Free).
func (sv *Supervisor) workerSays(capacity int) state.Worker {
	sv.mu.Lock()
	running, taking := sv.placesLocked()
	waiting := slices.Sorted(maps.Keys(sv.waiting))
	sv.mu.Unlock()
	return state.Worker{Name: sv.Worker, Capacity: capacity, Running: slices.Sorted(maps.Keys(running)),
		Taking: slices.Sorted(maps.Keys(taking)), Waiting: waiting, LastSeen: time.Now().UTC()}
}

// keepRegistered keeps the worker's key through lease.Keep (the one
// renewal loop), saying what the worker runs at each renewal; a key that
// expired (the worker was cut off) is registered again. Its agents are
// fenced by their own leases, not by this one.
func (sv *Supervisor) keepRegistered(ctx context.Context, ws state.Workers, reg *state.WorkerRegistration, capacity int, ttl time.Duration) *lease.Kept {
	return lease.Keep(ctx, ttl, func(op context.Context) error {
		err := (*reg).Renew(op, sv.workerSays(capacity))
		if !errors.Is(err, state.ErrLeaseLost) {
			return err
		}
		sv.Log.Warn("the worker's registration expired; registering again")
		r, err := ws.RegisterWorker(op, sv.workerSays(capacity))
		if err == nil {
			*reg = r // the one RunWorker releases as it leaves
		}
		return err
	}, lease.KeepOptions{
		IsLost: func(error) bool { return false }, // never: registered again
		Warn:   func(err error) { sv.Log.Warn("renew the worker's registration", "err", err) },
	})
}

// placedToStart: a is placed here, never started (or recorded but not
// yet run), and would be wanted if it ran.
func (sv *Supervisor) placedToStart(a *store.Agent, t *store.Task) bool {
	if sv.Worker == "" || a.Status != store.AgentPending || a.Runtime == config.RuntimeNone {
		return false
	}
	run := *a
	run.Status = store.AgentRunning
	return sv.wantedIn(&run, t)
}

// Capacity. A worker runs at most its capacity of agents at once: a
// place is held by a live host, a start or a claim in flight, and a
// respawn due (a crashed agent keeps its place). An agent placed here
// when every place is held waits, pending and placed here (pm workers
// lists it under WAITING), and starts when a place frees (a host's exit
// wakes the loop); it is not moved to another worker. A gone worker's
// agent is claimed only by a worker with a free place: while none has
// one it stays placed on the gone worker, and the first worker whose
// place frees claims it.

// wayOut ends the worker's goroutines that start hosts: its context
// first (a claim waiting for a lease ends), then it waits for the claims,
// then for the starts (a claim hands its agent to one: waited in this
// order, no start is added once its wait began).
func (sv *Supervisor) wayOut() {
	sv.cancel()
	sv.claimsRun.Wait()
	sv.starting.Wait()
}

// placesLocked is who holds this worker's places (sv.mu held): the agents
// its hosts run, and those it is taking (a start or claim in flight, a
// respawn due). The registration says both; a reservation counts both.
// It counts from what the worker knows, never a probe of a host under
// sv.mu (a probe that hangs would stall the whole supervisor): a host is
// watched from its start (or the first reconcile that sees it live) until
// its exit is seen (its exit watcher, or a reconcile's probe, made
// outside the lock, forgets it).
func (sv *Supervisor) placesLocked() (running, taking map[string]bool) {
	running, taking = map[string]bool{}, map[string]bool{}
	for name := range sv.watching {
		running[name] = true
	}
	for name := range sv.pending {
		if !running[name] {
			taking[name] = true
		}
	}
	for key := range sv.claiming {
		if name := strings.TrimPrefix(key, "start "); !running[name] {
			taking[name] = true
		}
	}
	return running, taking
}

// placesTakenLocked counts the agents holding one of this worker's places
// (sv.mu held).
func (sv *Supervisor) placesTakenLocked() int {
	running, taking := sv.placesLocked()
	return len(running) + len(taking)
}

// reserve takes a place for key (a start, "start NAME", or a claim,
// "NAME"): busy when that start or claim is in flight already, full when
// every place is held. An agent that holds a place already (a claim of it
// handing on to its start, or a start in flight when its claim moves it)
// takes no second one.
func (sv *Supervisor) reserve(key string) (ok, full bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.claiming[key] {
		return false, false
	}
	running, taking := sv.placesLocked()
	name := strings.TrimPrefix(key, "start ")
	if sv.capacity > 0 && !running[name] && !taking[name] && len(running)+len(taking) >= sv.capacity {
		return false, true
	}
	sv.claiming[key] = true
	return true, false
}

// unwait forgets that name waited for a place.
func (sv *Supervisor) unwait(name string) {
	sv.mu.Lock()
	delete(sv.waiting, name)
	sv.mu.Unlock()
}

// startWhenRoom starts an agent placed here once it has a place, or
// notes it waiting for one.
func (sv *Supervisor) startWhenRoom(name string) {
	ok, full := sv.reserve("start " + name)
	sv.mu.Lock()
	if full {
		sv.waiting[name] = true
	} else {
		delete(sv.waiting, name)
	}
	sv.mu.Unlock()
	if ok {
		sv.starting.Add(1)
		go sv.startPlaced(name)
	}
}

// startPlaced starts an agent placed here, its place reserved ("start
// NAME"): Start re-checks under the agent's lock, never a duplicate. The
// started host is watched before the reservation goes, so its place is
// never counted free in between.
func (sv *Supervisor) startPlaced(name string) {
	defer sv.starting.Done()
	started := false
	defer func() {
		sv.mu.Lock()
		delete(sv.claiming, "start "+name)
		sv.mu.Unlock()
		// Read again after a start; a start that failed is tried again at
		// the next wake-up, not at once (a start failing for good would
		// spin the loop).
		if started {
			sv.recordChanged(name)
		}
	}()
	if err := sv.Launcher.Start(name); err != nil {
		sv.Log.Error("start an agent", "agent", name, "err", err)
		return
	}
	started = true
	if a, err := sv.records().Agent(name); err == nil && sv.here(a) && a.Status == store.AgentRunning && sv.drv.Alive(a.Handle) {
		sv.watchExit(name, a.Handle)
	}
}

// takeOver claims the wanted agents of workers that are gone, while this
// worker has a free place. A claim reserves its place only once it holds
// the agent's lease (claim): a gone worker's host may live on and keep its
// lease for as long as it likes, and a place reserved while that lease is
// waited for would be held for as long, starving every agent placed here.
func (sv *Supervisor) takeOver(ws state.Workers, leases state.AgentLeases) {
	live, err := ws.Workers()
	if err != nil {
		sv.Log.Warn("list the workers", "err", err)
		return
	}
	names := map[string]bool{}
	for _, w := range live {
		names[w.Name] = true
	}
	agents, _, err := sv.records().AgentsChecked()
	if err != nil {
		return
	}
	for _, a := range agents {
		if a.Worker == "" || names[a.Worker] || !sv.claimable(a) {
			continue
		}
		sv.mu.Lock()
		full := sv.capacity > 0 && sv.placesTakenLocked() >= sv.capacity
		busy := sv.claims[a.Name]
		if !full && !busy {
			sv.claims[a.Name] = true
			sv.claimsRun.Add(1) // here, on the loop's goroutine: before wayOut's Wait
		}
		sv.mu.Unlock()
		if full {
			return // no place here: a worker with one claims the rest
		}
		if !busy {
			go func() {
				defer sv.claimsRun.Done()
				sv.claim(leases, a)
				sv.mu.Lock()
				delete(sv.claims, a.Name)
				sv.mu.Unlock()
				sv.poke() // what it left (no place, a lease lost) is looked at again
			}()
		}
	}
}

// claimable: a (of a gone worker) is to run: wanted, placed and never
// started, or an owner whose task was rejected since its start.
func (sv *Supervisor) claimable(a *store.Agent) bool {
	b := *a // as if placed here: what this worker would start
	b.Worker = sv.Worker
	t := sv.task(a) // b's too: the same task
	return sv.wantedIn(a, t) || sv.placedToStart(&b, t) || sv.rejectedToStart(&b, t)
}

// claim moves agent seen (as takeOver read it, on a gone worker) to this
// worker once its lease is free: it takes the lease, then a place ("NAME");
// with no place free it lets the lease go and moves nothing (a worker with
// one claims it; the lease is free again for it). Waiting for the lease
// holds no place. The lease decides between workers racing; the record's
// compare-and-set then
// re-checks, on the record it replaces, everything the decision rested on:
// still placed on the gone worker, the same run (its old worker, back, did
// not start it again), not ended on purpose (pm kill) and still to run.
// Any of those changed since takeOver's read (or while the lease was
// waited for), nothing moves. A moved agent is handed to its start (never
// started) or its respawn before the place is let go.
func (sv *Supervisor) claim(leases state.AgentLeases, seen *store.Agent) {
	name, from := seen.Name, seen.Worker
	if err := leases.WaitAgentFree(sv.ctx, name); err != nil {
		return
	}
	le, err := leases.HoldAgent(sv.ctx, name, "worker "+sv.Worker)
	if err != nil {
		return // another worker won it (or its host runs again)
	}
	if ok, _ := sv.reserve(name); !ok {
		_ = le.Release(context.WithoutCancel(sv.ctx))
		return // no place: the lease goes back, free for a worker with one
	}
	// The place goes after the lease (deferred first, run last), and after
	// the hand-over to a start or respawn below.
	defer func() {
		sv.mu.Lock()
		delete(sv.claiming, name)
		sv.mu.Unlock()
		sv.poke()
	}()
	defer func() { _ = le.Release(context.WithoutCancel(sv.ctx)) }()
	moved := false
	r, err := sv.records().UpdateAgent(name, func(r *store.Agent) error {
		if r.Worker != from || r.Handle != seen.Handle || r.Status != seen.Status || !sv.claimable(r) {
			return store.ErrUnchanged
		}
		// The lost host's run is another machine's: nothing here to stop
		// or sweep, so the record forgets it.
		r.Worker, r.Handle, moved = sv.Worker, driver.Handle{}, true
		return nil
	})
	if err != nil {
		sv.Log.Error("move a lost worker's agent", "agent", name, "err", err)
		return
	}
	if !moved {
		return
	}
	sv.Log.Info("took over an agent of a worker that is gone", "agent", name, "from", from)
	t := sv.task(r)
	switch {
	case sv.placedToStart(r, t):
		// The claim's place passes to the start, unless a start of it is
		// in flight already (a reconcile saw it placed here): that one
		// holds its own reservation and starts it.
		sv.mu.Lock()
		hand := !sv.claiming["start "+name]
		if hand {
			sv.claiming["start "+name] = true
			sv.starting.Add(1) // inside claimsRun: before wayOut waits for starting
		}
		sv.mu.Unlock()
		if hand {
			go sv.startPlaced(name)
		}
	case sv.wantedIn(r, t) && sv.crashed(r, false):
		sv.scheduleRespawn(r) // holds the place (pending) from here
	}
	sv.recordChanged(name)
}
