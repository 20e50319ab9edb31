package supervisor

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// These tests drive the supervisor through drivertest's fake: no process
// runs, the test decides when a host "exits" and with what status, and the
// fake records what the supervisor started and stopped.

// rig is a store, a fake driver, a launcher and a supervisor on both.
type rig struct {
	s    *store.Store
	fake *drivertest.Driver
	l    *agent.Launcher
	sv   *Supervisor

	mu     sync.Mutex
	raised []string
}

func newRig(t *testing.T, p Policy) *rig {
	t.Helper()
	s := newStore(t)
	fake := drivertest.New()
	l := &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "pm", Driver: fake}
	r := &rig{s: s, fake: fake, l: l}
	r.sv = &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Driver: fake, Log: quiet(), Policy: p,
		RaiseHuman: func(name, text string) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.raised = append(r.raised, name+": "+text)
			return nil
		}}
	return r
}

// startOwner creates an active task whose owner runs on the llm runtime,
// started through the fake.
func (r *rig) startOwner(t *testing.T) (*store.Task, *store.Agent) {
	t.Helper()
	tk, err := task.Create(r.s, r.l, store.Human, task.Spec{Description: "keep me alive", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.UpdateAgent(tk.Owner, func(a *store.Agent) error { a.Runtime = "llm"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.l.Start(tk.Owner); err != nil {
		t.Fatal(err)
	}
	return tk, r.agent(t, tk.Owner)
}

func (r *rig) agent(t *testing.T, name string) *store.Agent {
	t.Helper()
	a, err := r.s.Agent(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// record writes what a host's finish writes when it exits by itself.
func (r *rig) record(t *testing.T, name string, code int) {
	t.Helper()
	if _, err := r.s.UpdateAgent(name, func(a *store.Agent) error {
		a.Status, a.ExitCode = store.AgentExited, &code
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// stopTimers cancels the scheduled respawns.
func stopTimers(sv *Supervisor) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	for _, t := range sv.pending {
		if t != nil {
			t.Stop()
		}
	}
}

// hang bounds waits that end on an event; it only keeps a broken test from hanging.
const hang = 20 * time.Second

// One reconcile after each kind of ending: the supervisor respawns exactly the
// wanted agents that crashed. Backoff timers are an hour long, so the test
// runs the scheduled respawn itself.
func TestReconcileWithFakeDriver(t *testing.T) {
	slow := Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour}
	for _, c := range []struct {
		name    string
		end     func(t *testing.T, r *rig, tk *store.Task, a *store.Agent)
		respawn bool
		live    bool
	}{
		{"still running: watched, left alone", func(*testing.T, *rig, *store.Task, *store.Agent) {}, false, true},
		{"host killed -9 (record left running)", func(t *testing.T, r *rig, _ *store.Task, a *store.Agent) {
			r.fake.Exit(a.Handle, 128+9)
		}, true, true},
		{"non-zero exit", func(t *testing.T, r *rig, _ *store.Task, a *store.Agent) {
			r.record(t, a.Name, 1)
			r.fake.Exit(a.Handle, 1)
		}, true, true},
		// Left on purpose: the task is stalled and waits for a person (pm
		// answer or pm kill --restart start it again, marking a supervisor
		// wanted then); nothing keeps the supervisor on for it
		// (agent.Wanted, as pm doctor --check reads it).
		{"exit 0: left on purpose", func(t *testing.T, r *rig, _ *store.Task, a *store.Agent) {
			r.record(t, a.Name, 0)
			r.fake.Exit(a.Handle, 0)
		}, false, false},
		{"killed by pm kill", func(t *testing.T, r *rig, _ *store.Task, a *store.Agent) {
			if err := r.l.Kill(store.Human, a.Name); err != nil {
				t.Fatal(err)
			}
		}, false, false},
		{"crashed after its task was done", func(t *testing.T, r *rig, tk *store.Task, a *store.Agent) {
			if _, err := r.s.UpdateTask(tk.ID, func(x *store.Task) error { x.Status = store.TaskDone; return nil }); err != nil {
				t.Fatal(err)
			}
			r.fake.Exit(a.Handle, 128+9)
		}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, slow)
			tk, a := r.startOwner(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r.sv.init(ctx)
			t.Cleanup(func() { stopTimers(r.sv) })
			c.end(t, r, tk, a)

			live, err := r.sv.reconcile()
			if err != nil {
				t.Fatal(err)
			}
			if live != c.live {
				t.Errorf("live = %v, want %v", live, c.live)
			}
			r.sv.mu.Lock()
			_, scheduled := r.sv.pending[a.Name]
			watched := r.sv.watching[a.Name]
			r.sv.mu.Unlock()
			if scheduled != c.respawn {
				t.Fatalf("respawn scheduled = %v, want %v", scheduled, c.respawn)
			}
			if alive := r.fake.Alive(a.Handle); alive != (watched == a.Handle) {
				t.Errorf("alive %v but watched %+v: only a running host is watched", alive, watched)
			}
			if !c.respawn {
				if n := len(r.fake.Started()); n != 1 {
					t.Fatalf("%d starts, want only the first", n)
				}
				return
			}
			r.sv.respawn(a.Name)
			got := r.agent(t, a.Name)
			if got.Restarts != 1 || got.Status != store.AgentRunning || got.Handle == a.Handle || !r.fake.Alive(got.Handle) {
				t.Fatalf("after the respawn: %+v", got)
			}
			if n := len(r.fake.Started()); n != 2 {
				t.Fatalf("%d starts, want the first and the respawn", n)
			}
			// The old run's group was cleared before the new one started.
			if !slices.Equal(r.fake.Stopped(), []driver.Handle{a.Handle}) {
				t.Fatalf("stopped %v, want the old run %v", r.fake.Stopped(), a.Handle)
			}
			waitEvent(t, r.s, "agent.respawned", a.Name, 1)
		})
	}
}

// A watched run that exits wakes the loop through the driver's Wait: no
// polling, no file event needed.
func TestExitOfWatchedRunWakesLoop(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	_, a := r.startOwner(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.sv.init(ctx)
	if _, err := r.sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.sv.wake:
		t.Fatal("woken while the host still runs")
	default:
	}
	r.fake.Exit(a.Handle, 128+9)
	select {
	case <-r.sv.wake:
	case <-time.After(hang):
		t.Fatal("the exit did not wake the loop")
	}
}

// Crash after crash under Run: each is respawned after its backoff until
// CrashLimit crashes mark the agent failed and file one request for the
// human; then nothing is live and Run returns.
func TestCrashLoopGivesUpWithFakeDriver(t *testing.T) {
	r := newRig(t, Policy{CrashLimit: 3, CrashWindow: time.Minute, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	_, owner := r.startOwner(t)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.sv.Run(ctx) }()

	h := owner.Handle
	for i := 1; i <= 3; i++ {
		r.fake.Exit(h, 128+9)
		if i == 3 {
			break
		}
		waitEvent(t, r.s, "agent.respawned", owner.Name, i)
		a := r.agent(t, owner.Name)
		if a.Restarts != i || a.Status != store.AgentRunning || !r.fake.Alive(a.Handle) {
			t.Fatalf("after respawn %d: %+v", i, a)
		}
		h = a.Handle
	}
	waitEvent(t, r.s, "agent.failed", owner.Name, 1)
	if err := <-ran; err != nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (ctx %v): want a clean exit once nothing is live", err, ctx.Err())
	}
	a := r.agent(t, owner.Name)
	if a.Status != store.AgentFailed || !strings.Contains(a.Reason, "crashed 3 times") || a.Restarts != 2 {
		t.Fatalf("given up: %+v", a)
	}
	if n, m := len(r.fake.Started()), len(r.fake.Stopped()); n != 3 || m != 3 {
		t.Fatalf("%d starts and %d stops, want 3 (first + 2 respawns) and 3 (each dead run's leftovers ended once: 2 before a respawn, 1 at the give-up)", n, m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.raised) != 1 || !strings.HasPrefix(r.raised[0], owner.Name+": Agent @"+owner.Name+" (owner, task ") {
		t.Fatalf("raised %q", r.raised)
	}
}

// pm kill under Run: the run is stopped through the driver, the agent is
// not wanted any more, nothing restarts it and Run returns.
func TestKilledAgentNotRestartedWithFakeDriver(t *testing.T) {
	r := newRig(t, Policy{CrashLimit: 3, CrashWindow: time.Minute, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	tk, owner := r.startOwner(t)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.sv.Run(ctx) }()
	if _, err := task.Kill(r.s, r.l, store.Human, tk.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (ctx %v): want a clean exit once nothing is live", err, ctx.Err())
	}
	if n := len(r.fake.Started()); n != 1 {
		t.Fatalf("%d starts: a killed agent was restarted", n)
	}
	if st := r.fake.Stopped(); len(st) == 0 || st[0] != owner.Handle || r.fake.Alive(owner.Handle) {
		t.Fatalf("stopped %v, want the owner's run %v ended", st, owner.Handle)
	}
	if a := r.agent(t, owner.Name); a.Status != store.AgentKilled {
		t.Fatalf("owner %+v, want killed", a)
	}
}
