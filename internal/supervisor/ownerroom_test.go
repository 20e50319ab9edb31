package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// A crash-looping owner is given up on; its role agents must not be left
// talking in a room nobody owns: the room closes (owner-failed), so the
// role's host leaves and the supervisor no longer wants it.
func TestGivenUpOwnerClosesItsRoom(t *testing.T) {
	r := newRig(t, Policy{CrashLimit: 2, CrashWindow: time.Minute, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	tk, owner := r.startOwner(t)
	ph, roles, err := agent.OpenPhase(r.s, r.l, store.Actor{Name: owner.Name, Agent: owner},
		phase.Spec{TaskID: tk.ID, Name: "Talk", Limit: 5, Roles: []string{"designer"}})
	if err != nil || len(roles) != 1 {
		t.Fatalf("open phase: %v %v", roles, err)
	}
	if _, err := r.s.UpdateAgent(roles[0], func(a *store.Agent) error { a.Runtime = "llm"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.l.Start(roles[0]); err != nil {
		t.Fatal(err)
	}
	role := r.agent(t, roles[0])
	if !r.sv.wanted(role) {
		t.Fatalf("role %+v not wanted while its room is open", role)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	go func() { _ = r.sv.Run(ctx) }()

	r.fake.Exit(owner.Handle, 128+9)
	waitEvent(t, r.s, "agent.respawned", owner.Name, 1)
	r.fake.Exit(r.agent(t, owner.Name).Handle, 128+9)
	waitEvent(t, r.s, "phase.closed", "", 1)

	got, err := r.s.Phase(tk.ID, ph.ID)
	if err != nil || got.Status != store.PhaseClosed || got.CloseReason != store.CloseOwnerFailed {
		t.Fatalf("phase %+v (%v): want closed, owner-failed", got, err)
	}
	if a := r.agent(t, owner.Name); a.Status != store.AgentFailed {
		t.Fatalf("owner %+v: want failed", a)
	}
	if r.sv.wanted(r.agent(t, roles[0])) {
		t.Fatal("the role is still wanted in a closed room")
	}
}
