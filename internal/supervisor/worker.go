package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
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
	sv.claiming = map[string]bool{}
	reg, err := ws.RegisterWorker(ctx, sv.workerSays(capacity))
	if err != nil {
		return err
	}
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
	go sv.keepRegistered(ctx, ws, reg, capacity, leases.LeaseTTL())
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

// workerSays is this worker's registration as it stands.
func (sv *Supervisor) workerSays(capacity int) state.Worker {
	sv.mu.Lock()
	var running []string
	for name, h := range sv.watching {
		if sv.drv.Alive(h) {
			running = append(running, name)
		}
	}
	sv.mu.Unlock()
	slices.Sort(running)
	return state.Worker{Name: sv.Worker, Capacity: capacity, Running: running, LastSeen: time.Now().UTC()}
}

// keepRegistered renews the worker's key every third of the TTL; a key
// that expired (the worker was cut off) is registered again.
func (sv *Supervisor) keepRegistered(ctx context.Context, ws state.Workers, reg state.WorkerRegistration, capacity int, ttl time.Duration) {
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := reg.Renew(ctx, sv.workerSays(capacity))
		if errors.Is(err, state.ErrLeaseLost) {
			sv.Log.Warn("the worker's registration expired; registering again")
			if r, err := ws.RegisterWorker(ctx, sv.workerSays(capacity)); err == nil {
				reg = r
			}
			continue
		}
		if err != nil {
			sv.Log.Warn("renew the worker's registration", "err", err)
		}
	}
}

// placedToStart: a is placed here, never started (or recorded but not
// yet run), and would be wanted if it ran.
func (sv *Supervisor) placedToStart(a *store.Agent) bool {
	if sv.Worker == "" || a.Status != store.AgentPending || a.Runtime == config.RuntimeNone {
		return false
	}
	run := *a
	run.Status = store.AgentRunning
	return sv.wanted(&run)
}

// startPlaced starts an agent placed here (Start re-checks under the
// agent's lock: never a duplicate).
func (sv *Supervisor) startPlaced(name string) {
	sv.mu.Lock()
	busy := sv.claiming["start "+name]
	sv.claiming["start "+name] = true
	sv.mu.Unlock()
	if busy {
		return
	}
	defer func() {
		sv.mu.Lock()
		delete(sv.claiming, "start "+name)
		sv.mu.Unlock()
	}()
	if err := sv.Launcher.Start(name); err != nil {
		sv.Log.Error("start a placed agent", "agent", name, "err", err)
	}
	sv.recordChanged(name)
}

// takeOver claims the wanted agents of workers that are gone.
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
		if a.Worker == "" || names[a.Worker] || !(sv.wanted(a) || sv.placedToStartAnywhere(a)) {
			continue
		}
		sv.mu.Lock()
		busy := sv.claiming[a.Name]
		sv.claiming[a.Name] = true
		sv.mu.Unlock()
		if !busy {
			go sv.claim(leases, a.Name, a.Worker)
		}
	}
}

// placedToStartAnywhere is placedToStart whatever the agent's worker.
func (sv *Supervisor) placedToStartAnywhere(a *store.Agent) bool {
	b := *a
	b.Worker = sv.Worker
	return sv.placedToStart(&b)
}

// claim moves agent name from the gone worker from to this one, once its
// lease is free: the lease decides between workers racing, the record's
// compare-and-set that the agent is still placed on from.
func (sv *Supervisor) claim(leases state.AgentLeases, name, from string) {
	defer func() {
		sv.mu.Lock()
		delete(sv.claiming, name)
		sv.mu.Unlock()
		sv.poke()
	}()
	if err := leases.WaitAgentFree(sv.ctx, name); err != nil {
		return
	}
	le, err := leases.HoldAgent(sv.ctx, name, "worker "+sv.Worker)
	if err != nil {
		return // another worker won it (or its host runs again)
	}
	defer func() { _ = le.Release(context.WithoutCancel(sv.ctx)) }()
	moved := false
	_, err = sv.records().UpdateAgent(name, func(r *store.Agent) error {
		if r.Worker != from {
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
	if moved {
		sv.Log.Info("took over an agent of a worker that is gone", "agent", name, "from", from)
		sv.recordChanged(name)
	}
}
