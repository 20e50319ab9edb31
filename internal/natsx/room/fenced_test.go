package room_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/lease"
	"github.com/plasmodium/pm/internal/natsx/room"
)

// Rooms whose appends carry their holders' fence marks (AppendVia with
// lease.Writer.Publish: each attempt one atomic batch) keep the room's
// invariant: writers of three holders on every node race to fill a room
// and it accepts exactly its limit, indices 1..limit once each (a batch
// refused because the room moved on is read again and retried, never
// taken for a fence). A fourth holder, whose lease another took over,
// has every append refused as fenced, and nothing of it is stored.
func TestExactLimitWithFencedWriters(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			const limit, perHolder = 30, 4
			const stream, prefix, fences = "FR", "fr.room.", "fr.fence."
			type holder struct {
				r *room.Rooms
				w *lease.Writer
			}
			open := func(node int, key, who string) holder {
				c := h.Connect(node)
				r, err := room.OpenFenced(ctx, c, stream, prefix, fences)
				if err != nil {
					t.Fatal(err)
				}
				if r.Fences() != fences || !r.Batched() {
					t.Fatalf("the rooms' stream holds no fence subjects (%q)", r.Fences())
				}
				l, err := lease.Open(ctx, c, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				le, err := l.Acquire(ctx, key, who)
				if err != nil {
					t.Fatal(err)
				}
				w, err := le.Writer(ctx, stream, fences+key)
				if err != nil {
					t.Fatal(err)
				}
				return holder{r, w}
			}
			var holders []holder
			for i := range 3 {
				holders = append(holders, open(i%h.Len(), fmt.Sprintf("a%d", i), fmt.Sprintf("host-%d", i)))
			}
			// The fenced one: its lease is taken over (deleted, as if it
			// expired, and taken by another host, whose Writer marks it).
			fenced := open(0, "gone", "old-host")
			cn := h.Connect(h.Len() - 1)
			l, err := lease.Open(ctx, cn, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			kv, err := cn.JS.KeyValue(ctx, lease.Bucket)
			if err != nil {
				t.Fatal(err)
			}
			if err := kv.Delete(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			nle, err := l.Acquire(ctx, "gone", "new-host")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := nle.Writer(ctx, stream, fences+"gone"); err != nil {
				t.Fatal(err)
			}
			// Into the empty room first, so ErrFull cannot stand in for
			// the refusal: the fenced holder's append is ErrFenced.
			if _, err := fenced.r.AppendVia(ctx, "ph-race", "fenced-first", []byte("late"), limit, fenced.w.Publish([]byte("pm say"))); !errors.Is(err, lease.ErrFenced) {
				t.Fatalf("the fenced holder's append into an empty room: %v, want ErrFenced", err)
			}

			var accepted atomic.Int64
			seen := make([]atomic.Int32, limit+1)
			var wg sync.WaitGroup
			errc := make(chan error, 64)
			for hi, hd := range holders {
				for w := range perHolder {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := 0; ; k++ {
							got, err := hd.r.AppendVia(ctx, "ph-race", fmt.Sprintf("h%d-w%d-%d", hi, w, k), []byte("hi"), limit, hd.w.Publish([]byte("pm say")))
							if errors.Is(err, room.ErrFull) {
								return
							}
							if err != nil {
								errc <- err
								return
							}
							accepted.Add(1)
							seen[got.Index].Add(1)
						}
					}()
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 5 {
					_, err := fenced.r.AppendVia(ctx, "ph-race", fmt.Sprintf("fenced-%d", k), []byte("late"), limit, fenced.w.Publish([]byte("pm say")))
					if !errors.Is(err, lease.ErrFenced) && !errors.Is(err, room.ErrFull) {
						errc <- fmt.Errorf("the fenced holder's append: %v, want ErrFenced", err)
					}
				}
			}()
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Error(err)
			}
			if n := accepted.Load(); n != limit {
				t.Fatalf("accepted %d, want exactly %d", n, limit)
			}
			for i := 1; i <= limit; i++ {
				if seen[i].Load() != 1 {
					t.Errorf("index %d accepted %d times", i, seen[i].Load())
				}
			}
			n := 0
			if err := holders[0].r.Read(ctx, "ph-race", func(m room.Message) error {
				n++
				if string(m.Data) != "hi" {
					t.Errorf("the room holds %q (%s): the fenced holder's", m.Data, m.ID)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if n != limit {
				t.Fatalf("read %d, want %d", n, limit)
			}
		})
	}
}
