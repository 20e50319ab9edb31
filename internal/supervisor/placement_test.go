package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// An agent placed on a worker is that worker's alone: its crash is not
// respawned by a supervisor of another machine (nor is it live for one),
// the worker's supervisor respawns it; a launcher that is not its worker
// starts nothing for it.
func TestPlacedAgentIsItsWorkersOnly(t *testing.T) {
	slow := Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour}
	r := newRig(t, slow)
	_, owner := r.startOwner(t)
	if _, err := r.s.UpdateAgent(owner.Name, func(a *store.Agent) error { a.Worker = "w1"; return nil }); err != nil {
		t.Fatal(err)
	}
	r.fake.Exit(owner.Handle, 128+9) // its host died

	for _, tc := range []struct {
		worker   string
		wantLive bool
	}{
		{"", false},   // a machine that is no worker: not its agent
		{"w2", false}, // another worker
		{"w1", true},  // its worker respawns it
	} {
		l := &agent.Launcher{Store: r.s, State: fsstate.New(r.s), Exe: "pm", Driver: r.fake, Worker: tc.worker}
		sv := &Supervisor{Store: r.s, State: fsstate.New(r.s), Launcher: l, Driver: r.fake, Log: quiet(), Policy: slow, Worker: tc.worker}
		ctx, cancel := context.WithCancel(context.Background())
		sv.init(ctx)
		sv.claiming = map[string]bool{}
		live, err := sv.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		sv.mu.Lock()
		_, scheduled := sv.pending[owner.Name]
		sv.mu.Unlock()
		stopTimers(sv)
		cancel()
		if live != tc.wantLive || scheduled != tc.wantLive {
			t.Errorf("supervisor of worker %q: live %v, respawn scheduled %v; want %v", tc.worker, live, scheduled, tc.wantLive)
		}
	}

	// A start from a machine that is not w1 spawns nothing.
	before := len(r.fake.Started())
	if _, err := r.s.UpdateAgent(owner.Name, func(a *store.Agent) error { a.Status = store.AgentPending; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := (&agent.Launcher{Store: r.s, State: fsstate.New(r.s), Exe: "pm", Driver: r.fake}).Start(owner.Name); err != nil {
		t.Fatal(err)
	}
	if got := len(r.fake.Started()); got != before {
		t.Fatalf("a launcher that is not the agent's worker started it (%d starts, had %d)", got, before)
	}
	if a := r.agent(t, owner.Name); a.Status != store.AgentPending {
		t.Fatalf("status %s after a start left to the worker, want pending", a.Status)
	}
}
