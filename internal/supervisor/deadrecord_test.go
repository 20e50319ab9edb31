package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/store"
)

// An owner whose host died after pm done (its task is done, so it is not
// respawned) is not left recorded running: the reconcile that sees it
// records how it ended.
func TestDeadHostPastDoneIsRecorded(t *testing.T) {
	r := newRig(t, Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour})
	tk, a := r.startOwner(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.sv.init(ctx)
	if _, err := r.s.UpdateTask(tk.ID, func(x *store.Task) error { x.Status = store.TaskDone; return nil }); err != nil {
		t.Fatal(err)
	}
	r.fake.Exit(a.Handle, 128+9)
	live, err := r.sv.reconcile()
	if err != nil || live {
		t.Fatalf("reconcile = %v, %v", live, err)
	}
	got := r.agent(t, a.Name)
	if got.Status == store.AgentRunning || got.EndedAt == nil || got.Reason == "" {
		t.Fatalf("owner after its host died past done: %+v", got)
	}
	if n := len(r.fake.Started()); n != 1 {
		t.Fatalf("%d starts: a done task's owner was respawned", n)
	}
}
