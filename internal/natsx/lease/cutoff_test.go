package lease_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/lease"
)

// A holder cut off from a three-node cluster (the one node it can reach
// is stopped) loses its lease: another holder, on another node, is woken
// when it expires, takes it and goes on writing. When the cut-off holder
// reaches the cluster again, it can neither renew nor write: its fenced
// writes are refused by the stream, and the stream holds the new holder's
// writes and none of the old one's after the takeover.
func TestCutOffHolderIsFenced(t *testing.T) {
	h := hubtest.Three(t)
	ctx := ctxFor(t)
	const cut, other = 0, 1
	// A reaches node cut only: it does not follow the cluster's gossip to
	// the other nodes, as a machine whose network reaches one node.
	reconnected := make(chan struct{}, 1)
	ca, err := natsx.Connect(ctx, h.URL(cut), nats.IgnoreDiscoveredServers(), nats.ReconnectWait(50*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ca.Close)
	cb := h.Connect(other)
	if _, err := cb.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
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
	const key, subj = "cedar_a1b2", "t.cedar_a1b2"
	a, err := la.Acquire(ctx, key, "worker-a")
	if err != nil {
		t.Fatal(err)
	}
	wa, err := a.Writer(ctx, "T", subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := wa.Append(ctx, []byte("a: before the cut")); err != nil {
		t.Fatal(err)
	}

	// A's node stops: A is cut off and cannot renew.
	h.Stop(cut)
	if err := a.Renew(ctx); err == nil {
		t.Fatal("a holder cut off from the cluster renewed its lease")
	}

	// B, on another node, is woken when A's lease ages out, takes it and
	// writes; its takeover mark fences A.
	if err := lb.WaitFree(ctx, key); err != nil {
		t.Fatal(err)
	}
	b, err := lb.Acquire(ctx, key, "worker-b")
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.Writer(ctx, "T", subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := wb.Append(ctx, []byte("b: after the takeover")); err != nil {
		t.Fatal(err)
	}

	// A's node comes back and A reaches the cluster again: too late.
	h.Start(cut)
	select {
	case <-reconnected:
	case <-ctx.Done():
		t.Fatal("the cut-off holder never reconnected")
	}
	if err := natsx.Do(ctx, func(op context.Context) error { return a.Renew(op) }); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("the cut-off holder's renewal: %v, want ErrLost", err)
	}
	if err := natsx.Do(ctx, func(op context.Context) error { return wa.Append(op, []byte("a: after the cut")) }); !errors.Is(err, lease.ErrFenced) {
		t.Fatalf("the cut-off holder's write: %v, want ErrFenced", err)
	}
	if err := wb.Append(ctx, []byte("b: goes on")); err != nil {
		t.Fatalf("the new holder's write: %v", err)
	}
	checkCutStream(ctx, t, cb, subj)
	// The restarted node caught up before the nodes stop.
	h.WaitCurrent(ctx, "T", natsx.KVStream(lease.Bucket))
}

// matchMarks compares the stream's messages with want's parts, a part
// ending in a quote matching a takeover mark by its holder.
func matchMarks(got []string, want string) bool {
	parts := strings.Split(want, "|")
	if len(got) != len(parts) {
		return false
	}
	for i, p := range parts {
		if strings.HasSuffix(p, `"`) {
			if !strings.HasPrefix(got[i], p) {
				return false
			}
		} else if got[i] != p {
			return false
		}
	}
	return true
}

// checkCutStream requires subj to hold, up to B's last write, exactly A's
// mark and write before the cut, then B's mark and writes: nothing of A's
// after the takeover.
func checkCutStream(ctx context.Context, t *testing.T, cb *natsx.Conn, subj string) {
	t.Helper()
	var got []string
	if err := cb.Follow(ctx, "T", subj, 0, func(m jetstream.Msg) error {
		got = append(got, string(m.Data()))
		if string(m.Data()) == "b: goes on" {
			return natsx.ErrStop
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := `{"takeover":"worker-a"|a: before the cut|{"takeover":"worker-b"|b: after the takeover|b: goes on`
	if !matchMarks(got, want) {
		t.Fatalf("stream holds %q, want %s", got, want)
	}
}
