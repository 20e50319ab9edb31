package natsstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// BenchmarkReadMailbox: a follower's read of what came since its position
// (each wake-up of a resident's Serve, inbox.Call's wait), one new entry,
// eight and 64, on one node and on three. Each iteration posts them (not
// timed) and reads from the position after the last read.
func BenchmarkReadMailbox(b *testing.B) {
	for _, set := range hubtest.Sets() {
		for _, fresh := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/new=%d", set.Name, fresh), func(b *testing.B) {
				h := set.Start(b)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				st, err := natsstate.Open(ctx, h.Connect(0), "bench")
				if err != nil {
					b.Fatal(err)
				}
				const agent = "oak_0001"
				var pos int64
				entry := map[string]string{"kind": "request", "text": "a request of a few words"}
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					for range fresh {
						if err := st.Post(agent, entry); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					got := 0
					if pos, err = st.ReadMailbox(agent, pos, func(json.RawMessage, int64) error { got++; return nil }); err != nil {
						b.Fatal(err)
					}
					if got != fresh {
						b.Fatalf("read %d entries, want %d", got, fresh)
					}
				}
			})
		}
	}
}
