package room_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/room"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Writers on separate connections (on every node of a cluster) race to
// fill a room: it accepts exactly its limit, indices 1..limit once each,
// read back in order.
func TestExactLimitWithConcurrentWriters(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			const limit, perNode = 30, 8
			var conns []*natsx.Conn
			for i := range h.Len() {
				conns = append(conns, h.Connect(i))
			}
			rs, err := room.Open(ctx, conns[0])
			if err != nil {
				t.Fatal(err)
			}
			var accepted atomic.Int64
			seen := make([]atomic.Int32, limit+1)
			var wg sync.WaitGroup
			errc := make(chan error, len(conns)*perNode)
			for ci, c := range conns {
				r, err := room.Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				for w := range perNode {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := 0; ; k++ {
							got, err := r.Append(ctx, "ph-race", fmt.Sprintf("n%d-w%d-%d", ci, w, k), []byte("hi"), limit)
							if errors.Is(err, room.ErrFull) {
								return
							}
							if err != nil {
								errc <- err
								return
							}
							accepted.Add(1)
							seen[got.Index].Add(1)
							if got.Closing != (got.Index == limit) {
								errc <- fmt.Errorf("index %d closing %v", got.Index, got.Closing)
							}
						}
					}()
				}
			}
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
			var read []int
			if err := rs.Read(ctx, "ph-race", func(m room.Message) error { read = append(read, m.Index); return nil }); err != nil {
				t.Fatal(err)
			}
			for i, idx := range read {
				if idx != i+1 {
					t.Fatalf("read indices %v", read)
				}
			}
			if n, err := rs.Count(ctx, "ph-race"); err != nil || n != limit || len(read) != limit {
				t.Fatalf("count %d (%v), read %d, want %d", n, err, len(read), limit)
			}
		})
	}
}

// An append retried with its id is reported once and stored once, before
// and after the room fills.
func TestAppendIsIdempotent(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			r, err := room.Open(ctx, h.Connect(0))
			if err != nil {
				t.Fatal(err)
			}
			first, err := r.Append(ctx, "ph-x", "m1", []byte("a"), 2)
			if err != nil || first.Index != 1 || first.Again {
				t.Fatalf("first: %+v %v", first, err)
			}
			again, err := r.Append(ctx, "ph-x", "m1", []byte("a"), 2)
			if err != nil || !again.Again || again.Seq != first.Seq || again.Index != 1 {
				t.Fatalf("retried: %+v %v, want the first again", again, err)
			}
			last, err := r.Append(ctx, "ph-x", "m2", []byte("b"), 2)
			if err != nil || last.Index != 2 || !last.Closing {
				t.Fatalf("second: %+v %v", last, err)
			}
			if _, err := r.Append(ctx, "ph-x", "m3", []byte("c"), 2); !errors.Is(err, room.ErrFull) {
				t.Fatalf("third into a full room: %v", err)
			}
			again, err = r.Append(ctx, "ph-x", "m2", []byte("b"), 2)
			if err != nil || !again.Again || !again.Closing || again.Index != 2 {
				t.Fatalf("closing message retried on the full room: %+v %v", again, err)
			}
			if n, _ := r.Count(ctx, "ph-x"); n != 2 {
				t.Fatalf("count %d", n)
			}
		})
	}
}

// The stream's leader is stopped while writers on all three nodes fill a
// room; writers retry what failed with the same id. The room still ends
// with exactly its limit.
func TestExactLimitAcrossLeaderLoss(t *testing.T) {
	h := hubtest.Three(t)
	ctx := ctxFor(t)
	const limit, perNode = 40, 4
	var conns []*natsx.Conn
	for i := range 3 {
		conns = append(conns, h.Connect(i))
	}
	watch, err := room.Open(ctx, conns[0])
	if err != nil {
		t.Fatal(err)
	}
	leader := -1
	for i, n := range h.Nodes {
		if n.Server().JetStreamIsStreamLeader("$G", room.Stream) {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("no leader")
	}
	// A follower on a node that stays stops the leader at half the room.
	follower, err := room.Open(ctx, conns[(leader+1)%3])
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() {
		stopped <- follower.Follow(ctx, "ph-loss", limit/2-1, func(room.Message) error {
			h.Stop(leader)
			return natsx.ErrStop
		})
	}()
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for ci, c := range conns {
		r, err := room.Open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for w := range perNode {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ctx.Err() == nil; {
					_, err := r.Append(ctx, "ph-loss", fmt.Sprintf("n%d-w%d-%d", ci, w, k), nil, limit)
					switch {
					case errors.Is(err, room.ErrFull):
						return
					case err == nil:
						accepted.Add(1)
						k++
					}
					// Any other error (the leader gone, a new one electing):
					// the same id again, so nothing lands twice.
				}
			}()
		}
	}
	wg.Wait()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	n, err := watch.Count(ctx, "ph-loss")
	if err != nil {
		t.Fatal(err)
	}
	var ids = map[string]bool{}
	if err := watch.Read(ctx, "ph-loss", func(m room.Message) error {
		if ids[m.ID] {
			t.Errorf("message %s stored twice", m.ID)
		}
		ids[m.ID] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != limit || len(ids) != limit {
		t.Fatalf("room holds %d (%d read), want exactly %d", n, len(ids), limit)
	}
	if accepted.Load() > limit {
		t.Fatalf("%d appends reported accepted, limit %d", accepted.Load(), limit)
	}
}
