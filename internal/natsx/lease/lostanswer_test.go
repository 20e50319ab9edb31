package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/lease"
)

// A lease's writes whose answers are lost (the connection cut right after
// the write reached the hub: what a node's loss does) are recognised as
// its own: a take is the lease taken, not "held by another"; a renewal is
// the lease kept, not lost (the holder would fence itself for nothing),
// and so is the next renewal after one whose caller stopped waiting
// before it was answered; a release is the lease given up. Each write
// landed: the key says so.
func TestLostAnswersAreTheLeasesOwn(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	p := h.ProxyTo(0)
	l, err := lease.Open(ctx, h.ConnectVia(p), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	direct := h.Connect(0)
	other, err := lease.Open(ctx, direct, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := direct.JS.KeyValue(ctx, lease.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	revision := func() uint64 {
		t.Helper()
		e, err := kv.Get(ctx, "oak_0001")
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Value()) != "host-a" {
			t.Fatalf("the key holds %q, want host-a", e.Value())
		}
		return e.Revision()
	}
	cuts := int64(0)
	lose := func() {
		t.Helper()
		p.LoseAnswerTo("$KV.")
		cuts++
	}
	cut := func(what string) {
		t.Helper()
		if p.Cuts() != cuts {
			t.Fatalf("%s: %d answers lost, want %d", what, p.Cuts(), cuts)
		}
	}

	lose()
	a, err := l.Acquire(ctx, "oak_0001", "host-a")
	cut("take")
	if err != nil {
		t.Fatalf("a take whose answer was lost: %v, want the lease taken", err)
	}
	if got := revision(); got != a.Revision() {
		t.Fatalf("taken at revision %d, the key's is %d", a.Revision(), got)
	}

	lose()
	if err := a.Renew(ctx); err != nil {
		t.Fatalf("a renewal whose answer was lost: %v, want the lease kept", err)
	}
	cut("renewal")
	if got := revision(); got != a.Revision() {
		t.Fatalf("renewed to revision %d, the key's is %d", a.Revision(), got)
	}

	// The caller stops waiting before the repeat (the renewal loop's
	// bound): the renewal landed, unanswered. The next one is the lease's.
	lose()
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	err = a.Renew(short)
	cancel()
	cut("unawaited renewal")
	if err == nil {
		t.Fatal("a renewal whose caller stopped waiting before any answer reported success")
	}
	if errors.Is(err, lease.ErrLost) {
		t.Fatalf("a renewal whose answer was lost reported the lease lost: %v", err)
	}
	if err := a.Renew(ctx); err != nil {
		t.Fatalf("the renewal after an unanswered one: %v, want the lease kept", err)
	}
	if got := revision(); got != a.Revision() {
		t.Fatalf("renewed to revision %d, the key's is %d", a.Revision(), got)
	}
	if _, err := other.Acquire(ctx, "oak_0001", "host-b"); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("another holder while host-a keeps it: %v, want ErrHeld", err)
	}

	lose()
	if err := a.Release(ctx); err != nil {
		t.Fatalf("a release whose answer was lost: %v, want it released", err)
	}
	cut("release")
	if _, err := kv.Get(ctx, "oak_0001"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("after the release the key reads %v, want it gone", err)
	}
	if _, err := other.Acquire(ctx, "oak_0001", "host-b"); err != nil {
		t.Fatalf("another holder after the release: %v", err)
	}
}

// A fence mark whose answer is lost (a broker call's mark, the node lost
// right after it landed) is the Writer's own: repeated, it is recognised
// by its message id, not refused as a newer holder's, and the Writer's
// next mark follows it. A newer holder's takeover still fences it.
func TestLostMarkIsTheWritersOwn(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	p := h.ProxyTo(0)
	ca := h.ConnectVia(p)
	direct := h.Connect(0)
	if _, err := direct.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowRollup: true}); err != nil {
		t.Fatal(err)
	}
	l, err := lease.Open(ctx, ca, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.Acquire(ctx, "oak_0001", "host-a")
	if err != nil {
		t.Fatal(err)
	}
	const fence = "t.fence.oak_0001"
	w, err := a.Writer(ctx, "T", fence)
	if err != nil {
		t.Fatal(err)
	}
	p.LoseAnswerTo(fence)
	if err := w.Append(ctx, []byte("pm say")); err != nil {
		t.Fatalf("a mark whose answer was lost: %v, want it the Writer's own", err)
	}
	if p.Cuts() != 1 {
		t.Fatalf("%d answers lost, want 1", p.Cuts())
	}
	if err := w.Append(ctx, []byte("pm status")); err != nil {
		t.Fatalf("the mark after a lost answer: %v", err)
	}
	st, err := direct.JS.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n > 3 {
		t.Fatalf("the fence subject holds %d marks, want the takeover's and two (a repeat stored once)", n)
	}

	// Another holder takes over (the lease given up): the old Writer is fenced.
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb, err := lease.Open(ctx, direct, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lb.Acquire(ctx, "oak_0001", "host-b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Writer(ctx, "T", fence); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, []byte("pm say")); !errors.Is(err, lease.ErrFenced) {
		t.Fatalf("the old holder's mark after a takeover: %v, want ErrFenced", err)
	}
}

// Two Writers of one lease on one stream (two fence subjects) draw their
// marks' message ids from the lease, not each from its own count: the
// stream's duplicate window spans its subjects, and a second Writer's
// first mark taken for the first Writer's would be dropped, its Writer
// then fenced by its own hand.
func TestTwoWritersOfOneLeaseOnOneStream(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	c := h.Connect(0)
	if _, err := c.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	l, err := lease.Open(ctx, c, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.Acquire(ctx, "oak_0001", "host-a")
	if err != nil {
		t.Fatal(err)
	}
	w1, err := a.Writer(ctx, "T", "t.fence.one")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := a.Writer(ctx, "T", "t.fence.two")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w1.Append(ctx, []byte("pm say")); err != nil {
			t.Fatalf("w1's mark %d: %v", i, err)
		}
		if err := w2.Append(ctx, []byte("pm say")); err != nil {
			t.Fatalf("w2's mark %d: %v", i, err)
		}
	}
}
