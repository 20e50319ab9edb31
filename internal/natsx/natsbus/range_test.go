package natsbus_test

import (
	"fmt"
	"testing"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/natsbus"
)

// Range reads through a consumer it makes for the read, which on a
// cluster may sit on another node than the reader's: the answer that the
// consumer is made can reach the reader's node before the consumer's
// interest in its pulls does, so a pull has no responder there. That is
// no end of the read (Before came back with "no responders": CI's
// TestSeqBusAcrossNodes/three, and 5 runs of 5 of this one by their 50th
// round). Each round publishes an event on the first node and reads it at
// once from the last: the event, no error.
func TestRangeReadsWhatWasAcknowledged(t *testing.T) {
	h := hubtest.Three(t)
	ctx := ctxFor(t)
	pub, err := natsbus.Open(ctx, h.Connect(0), "p")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := natsbus.Open(ctx, h.Connect(h.Len()-1), "p")
	if err != nil {
		t.Fatal(err)
	}
	// Bounded: rounds × (a publish, a consumer made, a pull), seconds.
	const rounds = 100
	for r := range rounds {
		cur, err := pub.Publish(ctx, fmt.Sprintf("e%d", r), fmt.Appendf(nil, "%d", r))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = sub.Range(ctx, cur, cur, func(_ uint64, data []byte) error { got = append(got, string(data)); return nil })
		if err != nil || len(got) != 1 || got[0] != fmt.Sprint(r) {
			t.Fatalf("round %d: Range(%d, %d) read %q: %v", r, cur, cur, got, err)
		}
	}
}
