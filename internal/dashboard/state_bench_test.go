package dashboard

import (
	"context"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bench"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkState is GET /api/state on a generated state of 10,000 tasks
// (pmbench times it against the 100 ms goal through a real server).
func BenchmarkState(b *testing.B) {
	dir := b.TempDir()
	st, err := bench.Generate(dir, bench.StateSpec{Tasks: 10_000, Events: 10_000, MessagesPerPhase: 20})
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(st.Root)
	if err != nil {
		b.Fatal(err)
	}
	srv := &Server{sess: &ops.Session{Store: s, State: fsstate.New(s), Actor: store.Human, Getenv: func(string) string { return "" }}}
	_, end, err := s.Bus().Tail(0)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv.agents = newAgentView(ctx, s.Bus(), end) // as Open does
	for _, path := range []string{"/api/state", "/api/state?all=1&limit=10000"} {
		b.Run(path, func(b *testing.B) {
			before := cpuTime()
			for b.Loop() {
				w := httptest.NewRecorder()
				srv.state(w, httptest.NewRequest("GET", path, nil))
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			// CPU time moves far less with the machine's load than wall time.
			b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}
