package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// A starter (pm send, a prompt-object call) that starts the agent between
// the supervisor's look at a dead host and its respawn must not give the
// agent two hosts on one inbox: the respawn re-checks under the agent's lock.
// The interleaving is forced through the beforeRespawn hook, 30 times.
func TestRespawnRacingAStartGivesOneHost(t *testing.T) {
	slow := Policy{CrashLimit: 100, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour}
	for i := range 30 {
		r := newRig(t, slow)
		_, a := r.startOwner(t)
		ctx, cancel := context.WithCancel(context.Background())
		r.sv.init(ctx)
		r.fake.Exit(a.Handle, 128+9) // the host is killed -9
		r.sv.beforeRespawn = func(name string) {
			if err := r.l.Start(name); err != nil { // pm send starts it meanwhile
				t.Error(err)
			}
		}
		r.sv.respawn(a.Name)
		if n := len(r.fake.Running()); n != 1 {
			t.Fatalf("trial %d: %d hosts running, want 1", i, n)
		}
		got := r.agent(t, a.Name)
		if !r.fake.Alive(got.Handle) {
			t.Fatalf("trial %d: the recorded host %+v is not the live one", i, got.Handle)
		}
		cancel()
	}
}

// Reconcile the other way: a host that runs while its agent is not wanted is
// stopped through the driver (at once when it was killed, after the time it
// takes to leave by itself otherwise) and recorded killed; a wanted one is
// left alone.
func TestReconcileStopsUnwanted(t *testing.T) {
	const later = 3600 // seconds of grace: "not yet"
	for _, c := range []struct {
		name   string
		grace  int
		role   bool
		change func(t *testing.T, r *rig, tk *store.Task, a *store.Agent)
		stop   bool // stopped now
		wait   bool // scheduled for later
	}{
		{"wanted and running", later, false, func(*testing.T, *rig, *store.Task, *store.Agent) {}, false, false},
		{"task killed while its host runs (pm kill raced a respawn)", later, false, func(t *testing.T, r *rig, tk *store.Task, _ *store.Agent) {
			setTask(t, r, tk.ID, func(x *store.Task) { x.Status = store.TaskKilled })
		}, true, false},
		{"no longer the owner", later, false, func(t *testing.T, r *rig, tk *store.Task, _ *store.Agent) {
			setTask(t, r, tk.ID, func(x *store.Task) { x.Owner = "someone_0001" })
		}, true, false},
		{"agent killed, its host outlived the stop grace", 0, false, func(t *testing.T, r *rig, _ *store.Task, a *store.Agent) {
			setAgent(t, r, a.Name, func(x *store.Agent) { x.Status = store.AgentKilled })
		}, true, false},
		{"agent killed just now: pm kill is stopping it", later, false, func(t *testing.T, r *rig, _ *store.Task, a *store.Agent) {
			setAgent(t, r, a.Name, func(x *store.Agent) { x.Status = store.AgentKilled })
		}, false, true},
		{"task done, the owner outstayed the grace", 0, false, func(t *testing.T, r *rig, tk *store.Task, _ *store.Agent) {
			setTask(t, r, tk.ID, func(x *store.Task) { x.Status = store.TaskDone })
		}, true, false},
		{"task done just now: the owner is leaving", later, false, func(t *testing.T, r *rig, tk *store.Task, _ *store.Agent) {
			setTask(t, r, tk.ID, func(x *store.Task) { x.Status = store.TaskDone })
		}, false, true},
		{"role agent, phase active", 0, true, func(*testing.T, *rig, *store.Task, *store.Agent) {}, false, false},
		{"role agent, phase closed past the role grace", 0, true, func(t *testing.T, r *rig, tk *store.Task, a *store.Agent) {
			closePhase(t, r, tk.ID, a.PhaseID)
		}, true, false},
		{"role agent, phase closed within the role grace", later, true, func(t *testing.T, r *rig, tk *store.Task, a *store.Agent) {
			closePhase(t, r, tk.ID, a.PhaseID)
		}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour})
			r.s.Config().Runtime.RoleGraceSeconds, r.s.Config().Runtime.StopGraceSeconds = c.grace, c.grace
			tk, a := r.startOwner(t)
			if c.role {
				a = r.startRole(t, tk)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r.sv.init(ctx)
			t.Cleanup(func() { stopTimers(r.sv) })
			c.change(t, r, tk, a)
			if _, err := r.sv.reconcile(); err != nil {
				t.Fatal(err)
			}
			if c.stop {
				wctx, wcancel := context.WithTimeout(ctx, hang)
				defer wcancel()
				if _, err := r.fake.Wait(wctx, a.Handle); err != nil {
					t.Fatalf("the unwanted host was not stopped: %v", err)
				}
				waitStopsDone(t, r.sv)
				if got := r.agent(t, a.Name); got.Status != store.AgentKilled {
					t.Fatalf("stopped but recorded %s", got.Status)
				}
				return
			}
			r.sv.mu.Lock()
			_, scheduled := r.sv.stopAt[a.Name]
			r.sv.mu.Unlock()
			if scheduled != c.wait {
				t.Fatalf("stop scheduled = %v, want %v", scheduled, c.wait)
			}
			if len(r.fake.Stopped()) != 0 || !r.fake.Alive(a.Handle) {
				t.Fatalf("stopped %v: the host should still run", r.fake.Stopped())
			}
		})
	}
}

func setTask(t *testing.T, r *rig, id string, fn func(*store.Task)) {
	t.Helper()
	now := time.Now().UTC()
	if _, err := r.s.UpdateTask(id, func(x *store.Task) error { fn(x); x.EndedAt = &now; return nil }); err != nil {
		t.Fatal(err)
	}
}

func setAgent(t *testing.T, r *rig, name string, fn func(*store.Agent)) {
	t.Helper()
	now := time.Now().UTC()
	if _, err := r.s.UpdateAgent(name, func(x *store.Agent) error { fn(x); x.EndedAt = &now; return nil }); err != nil {
		t.Fatal(err)
	}
}

func closePhase(t *testing.T, r *rig, taskID, phaseID string) {
	t.Helper()
	if _, err := phase.Close(r.s, fsstate.New(r.s), store.Human, taskID, phaseID, store.CloseTask); err != nil {
		t.Fatal(err)
	}
}

// startRole opens a phase on tk and starts one llm role agent in it.
func (r *rig) startRole(t *testing.T, tk *store.Task) *store.Agent {
	t.Helper()
	ph, err := phase.Create(r.s, fsstate.New(r.s), store.Human, phase.Spec{TaskID: tk.ID, Name: "Design", Limit: 4, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(r.s, fsstate.New(r.s), store.Agent{TaskID: tk.ID, PhaseID: ph.ID, Role: "designer", Runtime: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.l.Start(a.Name); err != nil {
		t.Fatal(err)
	}
	return r.agent(t, a.Name)
}

// waitStopsDone waits, on the loop's wake-ups, until no stop is under way.
func waitStopsDone(t *testing.T, sv *Supervisor) {
	t.Helper()
	deadline := time.After(hang)
	for {
		sv.mu.Lock()
		n := len(sv.stopping)
		sv.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-sv.wake:
		case <-deadline:
			t.Fatal("a stop did not finish")
		}
	}
}

// The same with real processes: a host left running for a killed task (pm
// kill lost the race with a respawn) is stopped by the supervisor, recorded
// killed, and then nothing is live, so Run returns.
func TestRunStopsHostOfKilledTask(t *testing.T) {
	s := newStore(t)
	l := fakeHost(t, s)
	tk, err := task.Create(s, l, store.Human, task.Spec{Description: "killed meanwhile", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateAgent(tk.Owner, func(a *store.Agent) error { a.Runtime = "llm"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := l.Start(tk.Owner); err != nil {
		t.Fatal(err)
	}
	owner, _ := s.Agent(tk.Owner)
	if _, err := s.UpdateTask(tk.ID, func(x *store.Task) error { x.Status = store.TaskKilled; return nil }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(), Policy: DefaultPolicy}
	if err := sv.Run(ctx); err != nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (ctx %v): want a clean exit once the unwanted host is stopped", err, ctx.Err())
	}
	if driver.NewProcess(0).Alive(owner.Handle) {
		t.Fatal("the killed task's host still runs")
	}
	if a, _ := s.Agent(tk.Owner); a.Status != store.AgentKilled {
		t.Fatalf("recorded %s, want killed", a.Status)
	}
}

// The "supervisor wanted" marker: a supervisor that finds nothing live
// removes it; Revive starts one only while the marker is there and no
// supervisor holds the lock (here the start fails on a missing binary, which
// shows that it was tried).
func TestReviveFollowsTheMarker(t *testing.T) {
	s := newStore(t)
	l := &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/nonexistent/pm"}
	if err := Revive(l); err != nil {
		t.Fatalf("nothing wanted, yet Revive tried a start: %v", err)
	}
	if err := s.MarkSupervisorWanted(); err != nil {
		t.Fatal(err)
	}
	if err := Revive(l); err == nil {
		t.Fatal("wanted and not running: Revive did not start one")
	}
	unlock, ok, err := s.TryLockSupervisor()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := Revive(l); err != nil {
		t.Fatalf("a supervisor holds the lock, yet Revive tried a start: %v", err)
	}
	_ = unlock()
	if err := (&Supervisor{Store: s, State: fsstate.New(s), Log: quiet()}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.SupervisorWanted() {
		t.Fatal("a supervisor that found nothing live left the marker")
	}
}
