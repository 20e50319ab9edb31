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
	"github.com/plasmodium/pm/internal/state/statetest"
	"github.com/plasmodium/pm/internal/store"
)

// exitedOwners writes n active tasks whose owners exited 0 (stalled:
// each waits for a person, not a respawn).
func exitedOwners(tb testing.TB, st state.State, n int) {
	tb.Helper()
	zero := 0
	for i := range n {
		statetest.OwnedTask(tb, st, "stalled", &store.Agent{Name: fmt.Sprintf("oak_%04d", i+1), Runtime: "llm",
			Status: store.AgentExited, ExitCode: &zero, CreatedAt: time.Now()})
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
