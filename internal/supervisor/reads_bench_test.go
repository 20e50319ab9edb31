package supervisor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/store"
)

// exitedOwners writes n active tasks whose owners exited 0 (stalled:
// each waits for a person, not a respawn).
func exitedOwners(tb testing.TB, st state.State, n int) {
	tb.Helper()
	zero := 0
	for i := range n {
		owner := fmt.Sprintf("oak_%04d", i+1)
		err := st.WithTasks(func() error {
			_, err := st.CreateTask(func(id string) (*store.Task, []byte, error) {
				return &store.Task{ID: id, Description: "stalled", Status: store.TaskActive, Runtime: "llm", Owner: owner,
					CreatedAt: time.Now(), BlockedBy: []string{}}, nil, nil
			})
			return err
		})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := st.CreateAgent(&store.Agent{Name: owner, Runtime: "llm", Status: store.AgentExited, ExitCode: &zero, CreatedAt: time.Now()}); err != nil {
			tb.Fatal(err)
		}
	}
	// Each owner names its task, read back from the live tasks.
	live, err := st.LiveTasks()
	if err != nil {
		tb.Fatal(err)
	}
	for _, t := range live {
		if _, err := st.UpdateAgent(t.Owner, func(a *store.Agent) error { a.TaskID = t.ID; return nil }); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkReconcileExitedOwners is one reconcile that reads every record
// (a rescan: a supervisor's first look, or after a record was missed) of
// a project with 200 active tasks whose owners exited 0, on the files
// and on a one-node hub.
func BenchmarkReconcileExitedOwners(b *testing.B) {
	for _, backend := range []string{"files", "hub"} {
		b.Run(backend, func(b *testing.B) {
			s := newStore(b)
			var st state.State = fsstate.New(s)
			if backend == "hub" {
				h := hubtest.Single(b)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				var err error
				if st, err = natsstate.Open(ctx, h.Connect(0), "reconcile"); err != nil {
					b.Fatal(err)
				}
			}
			exitedOwners(b, st, 200)
			sv := &Supervisor{Store: s, State: st, Log: quiet()}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sv.init(ctx)
			b.Cleanup(func() { stopTimers(sv) })
			for b.Loop() {
				sv.mu.Lock()
				sv.rescan = true
				sv.mu.Unlock()
				if _, err := sv.reconcile(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
