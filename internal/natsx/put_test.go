package natsx_test

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
)

// A replicated stream's leader answers a write before it forgets the
// write was in flight (nats-server applies, acknowledges, then clears its
// "expected per subject in process" mark): a writer's next compare-and-set
// on the same subject, sent at once, can be refused with 10164 though
// nothing else wrote. That is no verdict, and Put must not return it as
// one (a lease's renewal read it as lost, a fence mark as a takeover: CI
// saw lease.TestOneHoldersConcurrentAppends fail on it). Each Put here
// expects the one before it, alone on its subject: every one is stored.
func TestPutsInARowAreNeverRefused(t *testing.T) {
	h := hubtest.Three(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := h.Connect(0).Stream(ctx, jetstream.StreamConfig{Name: "ROW", Subjects: []string{"row.>"}})
	if err != nil {
		t.Fatal(err)
	}
	// Connected to a follower (the leader's answer comes through a route).
	c := h.Connect(0)
	for i := range h.Len() {
		if h.Nodes[i].Name() != st.CachedInfo().Cluster.Leader {
			c = h.Connect(i)
		}
	}
	if st, err = c.JS.Stream(ctx, "ROW"); err != nil {
		t.Fatal(err)
	}
	// Bounded: writers × each writes, about 4 s under -race. The old Put
	// was refused in 4 runs of 5.
	const writers, each = 8, 250
	// Processes that only spin take the processors from the server's
	// threads: the leader is preempted between its answer and its
	// bookkeeping, as on a loaded machine (CI runs packages side by side;
	// spinning goroutines in this process did not do it).
	for range runtime.NumCPU() {
		// timeout ends it even if this test dies before its defer.
		spin := exec.Command("timeout", "60", "sh", "-c", "while :; do :; done")
		if err := spin.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = spin.Process.Kill(); _ = spin.Wait() }()
	}
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for i := range each {
				m := nats.NewMsg(fmt.Sprintf("row.%d", w))
				m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("row-%d-%d", w, i))
				seq, err := c.Put(ctx, st, m, last)
				if err != nil {
					errc <- fmt.Errorf("write %d of %s, alone on its subject, expecting the one before: %w", i, m.Subject, err)
					return
				}
				last = seq
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
