package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// A start killed between its record ("running") and its agent.started
// event (stress trial 430, kind no-supervisor) is announced to nobody: the
// supervisor, busy with another task, never reads that agent. When the
// other task ends, the supervisor's last look before leaving finds it
// live: it must stay, watch it and respawn it when it dies, not spin
// between that look and a reconcile that never reads it.
func TestUnannouncedStartFoundBeforeLeaving(t *testing.T) {
	r, a, _, b, h, ran, cancel := unannouncedStart(t)
	defer cancel()
	// The other task ends: nothing the supervisor knows of is live.
	if _, err := task.Kill(r.s, r.l, store.Human, a.ID, false); err != nil {
		t.Fatal(err)
	}
	// The unannounced host dies: it is respawned.
	r.fake.Exit(h, 128+9)
	waitEvent(t, r.s, "agent.respawned", b.Owner, 1)
	if got := r.agent(t, b.Owner); got.Status != store.AgentRunning || !r.fake.Alive(got.Handle) {
		t.Fatalf("after the respawn: %+v", got)
	}
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v with a live agent", err)
	default:
	}
	cancel()
	<-ran
}

// The same killed start while the supervisor stays busy (the other task
// runs on, so it never reaches its last look before leaving): the record
// landing wakes it and names the agent (store.WatchAgentRecords), so the
// unannounced host is watched and respawned when it dies, while the other
// agent still runs. No poll: the wake is the record's own rename.
func TestUnannouncedStartRespawnedWhileBusy(t *testing.T) {
	r, _, owner, b, h, ran, cancel := unannouncedStart(t)
	defer cancel()
	// The unannounced host dies while the other task's owner runs on.
	waitKnown(t, r.sv, b.Owner)
	r.fake.Exit(h, 128+9)
	waitEvent(t, r.s, "agent.respawned", b.Owner, 1)
	if got := r.agent(t, b.Owner); got.Status != store.AgentRunning || !r.fake.Alive(got.Handle) {
		t.Fatalf("after the respawn: %+v", got)
	}
	if !r.fake.Alive(owner.Handle) {
		t.Fatalf("the other task's owner is not running: the respawn came from the last look before leaving")
	}
	cancel()
	<-ran
}

// unannouncedStart runs a supervisor busy with task a (its owner running),
// then makes the killed start of task b's owner: a host runs and its record
// says so, with no agent.started event. cancel stops the supervisor; ran
// gets what Run returned.
func unannouncedStart(t *testing.T) (r *rig, a *store.Task, owner *store.Agent, b *store.Task, h driver.Handle, ran chan error, cancel context.CancelFunc) {
	t.Helper()
	r = newRig(t, Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	a, owner = r.startOwner(t)
	b, err := task.Create(r.s, r.l, store.Human, task.Spec{Description: "started by a killed command", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	t.Cleanup(cancel)
	ran = make(chan error, 1)
	go func() { ran <- r.sv.Run(ctx) }()
	waitKnown(t, r.sv, a.Owner) // its first reconcile has read every record
	if h, err = r.fake.Start(ctx, driver.Spec{Name: b.Owner}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := r.s.UpdateAgent(b.Owner, func(x *store.Agent) error {
		x.Runtime, x.Handle, x.Status, x.StartedAt = "llm", h, store.AgentRunning, &now
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return r, a, owner, b, h, ran, cancel
}

// waitKnown waits until a reconcile of sv has read name as live (every
// record read in the same pass).
func waitKnown(t *testing.T, sv *Supervisor, name string) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		sv.mu.Lock()
		known := sv.known[name]
		sv.mu.Unlock()
		if known {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconcile read %s", name)
		}
		time.Sleep(time.Millisecond)
	}
}

// A pm task killed between its task's record and its owner's start leaves
// an owner never started. A supervisor about to leave starts it (Settle)
// instead of leaving that work to whichever command comes next.
func TestNeverStartedOwnerStartedBeforeLeaving(t *testing.T) {
	r := newRig(t, Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	a, owner := r.startOwner(t)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.sv.Run(ctx) }()
	waitKnown(t, r.sv, a.Owner)

	// The killed pm task: the task and its owner recorded, nothing started.
	b, err := task.Create(r.s, r.l, store.Human, task.Spec{Description: "its pm task was killed", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.UpdateAgent(b.Owner, func(x *store.Agent) error { x.Runtime = "llm"; return nil }); err != nil {
		t.Fatal(err)
	}
	// The other task is done and its owner leaves (no command that would
	// run a Settle: pm done's is not part of this).
	setTask(t, r, a.ID, func(x *store.Task) { x.Status = store.TaskDone })
	r.record(t, owner.Name, 0)
	r.fake.Exit(owner.Handle, 0)
	waitEvent(t, r.s, "agent.started", b.Owner, 1)
	if got := r.agent(t, b.Owner); got.Status != store.AgentRunning || !r.fake.Alive(got.Handle) {
		t.Fatalf("the never-started owner: %+v", got)
	}
	cancel()
	<-ran
}
