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

// A start from a machine that is not an agent's worker changes nothing of
// it, whatever its status: an agent that ended there stays ended (before,
// any ended agent placed elsewhere was made pending again, for its worker
// to start, by whatever start named it: a fix for pm reject made at the
// launcher's depth). Its worker starts an owner that ended by itself only
// when its task was rejected since it last started (agent.RejectionUnseen).
func TestAnEndedAgentPlacedElsewhereIsNotRevived(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rejected  bool // its task rejected since it started
		wantStart bool // by its worker
	}{
		{"ended, nothing since", false, false},
		{"ended, its task rejected since it started", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, DefaultPolicy)
			tk, owner := r.startOwner(t)
			r.record(t, owner.Name, 0) // it ended by itself
			r.fake.Exit(owner.Handle, 0)
			if _, err := r.s.UpdateAgent(owner.Name, func(a *store.Agent) error { a.Worker = "w1"; return nil }); err != nil {
				t.Fatal(err)
			}
			if tc.rejected {
				if _, err := r.s.UpdateTask(tk.ID, func(x *store.Task) error { x.Rejected, x.Rejections = "again", x.Rejections+1; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			before := len(r.fake.Started())
			if err := (&agent.Launcher{Store: r.s, State: fsstate.New(r.s), Exe: "pm", Driver: r.fake}).Start(owner.Name); err != nil {
				t.Fatal(err)
			}
			if a := r.agent(t, owner.Name); a.Status != store.AgentExited || len(r.fake.Started()) != before {
				t.Fatalf("a start from elsewhere left it %s (%d starts)", a.Status, len(r.fake.Started())-before)
			}
			sv, _ := workerOn(t, r, r.fake, "w1", 0)
			if _, err := sv.reconcile(); err != nil {
				t.Fatal(err)
			}
			sv.starting.Wait()
			a := r.agent(t, owner.Name)
			if started := len(r.fake.Started()) > before; started != tc.wantStart || (a.Status == store.AgentRunning) != tc.wantStart {
				t.Fatalf("its worker started it %v (status %s), want %v", started, a.Status, tc.wantStart)
			}
			if tc.wantStart && a.Rejections != 1 {
				t.Fatalf("its start saw %d rejections, want 1", a.Rejections)
			}
		})
	}
}
