package task_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// staleWorkers is a project's records with workers whose registrations
// say what they said at their last renewal: nothing placed since.
type staleWorkers struct {
	state.State
	live []state.Worker
}

func (w staleWorkers) Workers() ([]state.Worker, error) { return w.live, nil }
func (staleWorkers) RegisterWorker(context.Context, state.Worker) (state.WorkerRegistration, error) {
	return nil, errors.New("staleWorkers: no registration")
}
func (staleWorkers) WatchWorkers(ctx context.Context, _ func()) error { <-ctx.Done(); return nil }

// Two tasks placed one after the other, before either worker renewed its
// registration (as two placed at the same instant are: placement runs in
// the tasks section), go to two workers: placement counts the agents
// placed on a worker that its registration does not list yet. Before, it
// read the registrations alone and put both on the first worker.
func TestPlacementCountsWhatItPlacedSinceTheRenewal(t *testing.T) {
	e := newEnv(t)
	e.l.State = staleWorkers{State: fsstate.New(e.s), live: []state.Worker{{Name: "w1", Capacity: 1}, {Name: "w2", Capacity: 1}}}
	e.l.Driver = drivertest.New() // a start here would be a fake's (none comes: every agent is a worker's)
	var got []string
	for _, d := range []string{"first", "second"} {
		tk := e.create(t, task.Spec{Description: d, Runtime: "llm"})
		a, err := e.s.Agent(tk.Owner)
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != store.AgentPending {
			t.Fatalf("the owner of %s is %s here, want pending for its worker", d, a.Status)
		}
		got = append(got, a.Worker)
	}
	if got[0] == got[1] {
		t.Fatalf("both tasks placed on %s, each worker with one free place", got[0])
	}
}
