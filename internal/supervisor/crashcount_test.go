package supervisor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// The crash-loop count outlives the supervisor: crashes counted by one
// supervisor that is then killed still count for the next, so a supervisor
// killed between crashes cannot keep an agent in a crash loop for ever. And
// one crash seen by two supervisors (the first killed before its respawn)
// counts once.
func TestCrashCountSurvivesTheSupervisor(t *testing.T) {
	p := Policy{CrashLimit: 3, CrashWindow: time.Hour, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	r := newRig(t, p)
	_, owner := r.startOwner(t)

	// The first supervisor sees two crashes and respawns after each.
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	ran := make(chan error, 1)
	go func() { ran <- r.sv.Run(ctx) }()
	h := owner.Handle
	for i := 1; i <= 2; i++ {
		r.fake.Exit(h, 128+9)
		waitEvent(t, r.s, "agent.respawned", owner.Name, i)
		h = r.agent(t, owner.Name).Handle
	}
	cancel() // killed: whatever it kept in memory is gone
	<-ran

	// A new supervisor sees the same crash twice (a reconcile, then
	// another), counts it once, and the third crash overall gives up.
	r.sv = &Supervisor{Store: r.s, State: fsstate.New(r.s), Launcher: r.l, Driver: r.fake, Log: quiet(), Policy: Policy{CrashLimit: 3, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour},
		RaiseHuman: r.sv.RaiseHuman}
	r.fake.Exit(h, 128+9)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	r.sv.init(ctx2)
	t.Cleanup(func() { stopTimers(r.sv) })
	if _, err := r.sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, r.s, "agent.failed", owner.Name, 1)
	a := r.agent(t, owner.Name)
	if a.Status != store.AgentFailed || !strings.Contains(a.Reason, "crashed 3 times") {
		t.Fatalf("after the third crash: %+v", a)
	}
	if a.Crashes == nil || len(a.Crashes.Runs) != 3 {
		t.Fatalf("crashes on record %+v, want 3", a.Crashes)
	}
}

// A crash counted on record before the supervisor was killed is not counted
// again by the next one for the same dead run.
func TestCrashCountedOncePerRun(t *testing.T) {
	slow := Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour}
	r := newRig(t, slow)
	_, owner := r.startOwner(t)
	r.fake.Exit(owner.Handle, 128+9)
	for i := range 3 { // three supervisors, each killed before its respawn came due
		sv := &Supervisor{Store: r.s, State: fsstate.New(r.s), Launcher: r.l, Driver: r.fake, Log: quiet(), Policy: slow}
		ctx, cancel := context.WithCancel(context.Background())
		sv.init(ctx)
		if _, err := sv.reconcile(); err != nil {
			t.Fatal(err)
		}
		stopTimers(sv)
		cancel()
		if c := r.agent(t, owner.Name).Crashes; c == nil || len(c.Runs) != 1 {
			t.Fatalf("supervisor %d: crashes on record %+v for one dead run", i+1, c)
		}
	}
}
