package supervisor

import (
	"context"
	"sync"
	"testing"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// taskReads is a state that counts its task reads by id.
type taskReads struct {
	state.State
	mu sync.Mutex
	n  map[string]int
}

func (r *taskReads) Task(id string) (*store.Task, error) {
	r.mu.Lock()
	r.n[id]++
	r.mu.Unlock()
	return r.State.Task(id)
}

func (r *taskReads) of(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

// A look at an exited owner reads its task once: whether it is wanted
// and whether its task was rejected since it ran are asked of the one
// read (on a hub each read is a request). The reconcile's look, and the
// last look before the supervisor leaves (anyLive).
func TestAnExitedOwnersTaskIsReadOnce(t *testing.T) {
	s := newStore(t)
	tk, owner := owned(t, s)
	zero := 0
	if _, err := s.UpdateAgent(owner.Name, func(a *store.Agent) error {
		a.Status, a.ExitCode = store.AgentExited, &zero // stalled: it left by itself
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	reads := &taskReads{State: fsstate.New(s), n: map[string]int{}}
	sv := &Supervisor{Store: s, State: reads, Log: quiet()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sv.init(ctx)
	t.Cleanup(func() { stopTimers(sv) })
	if _, err := sv.reconcile(); err != nil {
		t.Fatal(err)
	}
	if n := reads.of(tk.ID); n != 1 {
		t.Errorf("a reconcile read the exited owner's task %d times, want once", n)
	}
	if sv.anyLive(true) {
		t.Error("an owner that exited 0 is live")
	}
	if n := reads.of(tk.ID); n != 2 {
		t.Errorf("the last look read the exited owner's task %d times, want once", n-1)
	}
}
