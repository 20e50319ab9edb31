package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/store"
)

// TestReconcileCost measures (it asserts nothing about time) what 20
// wake-ups about one running agent cost the supervisor in a state with
// PM_BENCH_RECONCILE finished agents: reading every record on each wake-up
// (the old reconcile; forced here with rescan) against reading the live and
// the named ones. Figures go to docs/benchmarks.md. Skipped unless the
// variable is set:
//
//	PM_BENCH_RECONCILE=100000 go test -run TestReconcileCost -v ./internal/supervisor
func TestReconcileCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PM_BENCH_RECONCILE"))
	if n <= 0 {
		t.Skip("set PM_BENCH_RECONCILE=N to measure with N finished agents")
	}
	r := newRig(t, DefaultPolicy)
	_, a := r.startOwner(t)
	finishedAgents(t, r.s, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, full := range []bool{true, false} {
		r.sv.init(ctx)
		if _, err := r.sv.reconcile(); err != nil { // the first look reads everything either way
			t.Fatal(err)
		}
		before := cpu()
		for range 20 {
			r.sv.note(bus.Event{Kind: bus.EvAgentStarted, Agent: a.Name})
			if full {
				r.sv.rescan = true
			}
			if _, err := r.sv.reconcile(); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%d finished agents, 20 wake-ups about one agent, reading every record=%v: %.3f CPU-s", n, full, (cpu() - before).Seconds())
	}
}

// finishedAgents writes n exited agent records of done tasks straight to
// disk (no lock, no fsync: building the state is not what is measured).
func finishedAgents(t *testing.T, s *store.Store, n int) {
	t.Helper()
	zero := 0
	for i := range n {
		name := fmt.Sprintf("gen_%06x", i)
		a := store.Agent{Name: name, TaskID: fmt.Sprintf("tk-%06x", i), Runtime: config.RuntimeLLM, Status: store.AgentExited, ExitCode: &zero, CreatedAt: time.Now()}
		data, _ := json.Marshal(a)
		if err := os.MkdirAll(s.AgentDir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.AgentPath(name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cpu is this process's user + system time so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
