package natsbus_test

import (
	"fmt"
	"testing"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/natsbus"
)

// Range reads through a consumer it makes for the read, which on a
// cluster may sit on another node than the reader's, on a replica behind
// the stream's leader. Neither may cut the read short: the answer that
// the consumer is made can reach the reader's node before the consumer's
// interest in its pulls does, so a pull has no responder there (Before
// came back with "no responders": CI-like load failed
// TestSeqBusAcrossNodes/three, and this test 5 runs of 5 by their 50th
// round); and a pull that does not wait finds nothing yet on a replica one
// write behind (this test, 1 run of 4 under load, once the first was
// ridden out). Each round publishes an event on the first node and reads
// it at once from the last: the event, no error.
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
