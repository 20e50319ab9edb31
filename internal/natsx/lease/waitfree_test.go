package lease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/lease"
)

// A wait for a lease whose watch went unanswered (the request making its
// consumer reached the hub, its answer was lost with the connection) still
// ends once the lease expires: the key is read again each TTL, a backstop
// to the watch. Before, the waiter slept until its caller's context ended
// (a worker's claim: for good).
func TestWaitFreeOutlivesAnUnansweredWatch(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	p := h.ProxyTo(0)
	holder, err := lease.Open(ctx, h.Connect(0), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := lease.Open(ctx, h.ConnectVia(p), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Acquire(ctx, "oak_0001", "host-a"); err != nil {
		t.Fatal(err)
	}
	// host-a stops renewing: its lease expires within the TTL.
	p.LoseAnswerTo("$JS.API.CONSUMER.")
	if err := waiter.WaitFree(ctx, "oak_0001"); err != nil {
		t.Fatalf("wait past an unanswered watch: %v", err)
	}
	if p.Cuts() != 1 {
		t.Fatalf("%d answers lost, want the watch's", p.Cuts())
	}
	if _, err := waiter.Acquire(ctx, "oak_0001", "host-b"); err != nil {
		t.Fatalf("take after the wait: %v", err)
	}
}

// A wait for a lease its holder keeps renewing ends with ErrStillHeld,
// naming the holder, once WaitBound has passed: never a sleep for good.
func TestWaitFreeIsBounded(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	lease.SetWaitRideOut(t, time.Second)
	// A 3 s TTL: a renewal late by most of a second under -race keeps it.
	l, err := lease.Open(ctx, h.Connect(0), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.Acquire(ctx, "oak_0001", "host-a")
	if err != nil {
		t.Fatal(err)
	}
	kept := lease.Keep(ctx, 3*time.Second, a.Renew, lease.KeepOptions{})
	defer kept.Stop()
	err = l.WaitFree(ctx, "oak_0001")
	if !errors.Is(err, lease.ErrStillHeld) {
		t.Fatalf("wait for a lease renewed all along: %v, want ErrStillHeld", err)
	}
	t.Logf("%v", err)
	if kept.IsLost() {
		t.Fatalf("the holder lost its lease: %v", kept.Why())
	}
}
