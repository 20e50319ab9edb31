package lease_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/lease"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Host A holds an agent's lease and stops renewing it (cut off); host B,
// on another connection (another node of a cluster), is woken when it
// expires, takes it, and from then on A can neither renew nor write: its
// writes are refused by the stream, B's go through.
func TestExpiredLeaseIsFenced(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			ca, cb := h.Connect(0), h.Connect(h.Len()-1)
			if _, err := ca.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
				t.Fatal(err)
			}
			la, err := lease.Open(ctx, ca, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			lb, err := lease.Open(ctx, cb, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			a, err := la.Acquire(ctx, "cedar_a1b2", "host-a")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lb.Acquire(ctx, "cedar_a1b2", "host-b"); !errors.Is(err, lease.ErrHeld) {
				t.Fatalf("second holder: %v, want ErrHeld", err)
			}
			wa, err := a.Writer(ctx, "T", "t.cedar_a1b2")
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Renew(ctx); err != nil {
				t.Fatal(err)
			}
			if err := wa.Append(ctx, []byte("a1")); err != nil {
				t.Fatal(err)
			}
			// A stops renewing; B waits on the watch until the lease ages out.
			if err := lb.WaitFree(ctx, "cedar_a1b2"); err != nil {
				t.Fatal(err)
			}
			b, err := lb.Acquire(ctx, "cedar_a1b2", "host-b")
			if err != nil {
				t.Fatal(err)
			}
			wb, err := b.Writer(ctx, "T", "t.cedar_a1b2")
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Renew(ctx); !errors.Is(err, lease.ErrLost) {
				t.Fatalf("renewal after losing the lease: %v, want ErrLost", err)
			}
			if err := wa.Append(ctx, []byte("a2")); !errors.Is(err, lease.ErrFenced) {
				t.Fatalf("old holder's write: %v, want ErrFenced", err)
			}
			if err := wb.Append(ctx, []byte("b1")); err != nil {
				t.Fatalf("new holder's write: %v", err)
			}
			if err := a.Release(ctx); !errors.Is(err, lease.ErrLost) {
				t.Fatalf("old holder's release: %v, want ErrLost", err)
			}
			if err := b.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := la.WaitFree(ctx, "cedar_a1b2"); err != nil {
				t.Fatal(err)
			}
			if _, err := la.Acquire(ctx, "cedar_a1b2", "host-a"); err != nil {
				t.Fatalf("after release: %v", err)
			}
		})
	}
}

// Holders race for a released lease (Create over the delete mark): one
// wins, every other is told the lease is held, never another error.
func TestRaceForAReleasedLease(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	l, err := lease.Open(ctx, h.Connect(0), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		first, err := l.Acquire(ctx, "oak_0001", "first")
		if err != nil {
			t.Fatal(err)
		}
		if err := first.Release(ctx); err != nil {
			t.Fatal(err)
		}
		const n = 8
		won := make(chan *lease.Lease, n)
		errc := make(chan error, n)
		for i := range n {
			go func() {
				le, err := l.Acquire(ctx, "oak_0001", fmt.Sprintf("h%d", i))
				won <- le
				errc <- err
			}()
		}
		var winner *lease.Lease
		for range n {
			le, err := <-won, <-errc
			switch {
			case err == nil && winner == nil:
				winner = le
			case err == nil:
				t.Fatalf("round %d: two holders", round)
			case !errors.Is(err, lease.ErrHeld):
				t.Fatalf("round %d: a loser got %v, want ErrHeld", round, err)
			}
		}
		if winner == nil {
			t.Fatalf("round %d: nobody took the released lease", round)
		}
		if err := winner.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
