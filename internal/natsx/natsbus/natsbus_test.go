package natsbus_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/natsbus"
	"github.com/plasmodium/pm/internal/secret"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Publishers on every node; a follower started before them on each node
// sees every event once, all in the same order, the order of their
// cursors; a follower resumed from a cursor sees exactly what came after.
func TestOneOrderResumableFromACursor(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			const perNode = 20
			total := perNode * h.Len()
			var buses []*natsbus.Bus
			for i := range h.Len() {
				b, err := natsbus.Open(ctx, h.Connect(i), "p")
				if err != nil {
					t.Fatal(err)
				}
				buses = append(buses, b)
			}
			// Followers first: they are woken by each event, not polling.
			seen := make([][]string, len(buses))
			var fw sync.WaitGroup
			ready := make(chan struct{}, len(buses))
			for i, b := range buses {
				fw.Add(1)
				go func() {
					defer fw.Done()
					ready <- struct{}{}
					last := uint64(0)
					err := b.Follow(ctx, 0, func(cur uint64, data []byte) error {
						if cur <= last {
							return fmt.Errorf("cursor %d after %d", cur, last)
						}
						last = cur
						seen[i] = append(seen[i], string(data))
						if len(seen[i]) == total {
							return natsx.ErrStop
						}
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				}()
			}
			for range buses {
				<-ready
			}
			var pw sync.WaitGroup
			for i, b := range buses {
				pw.Add(1)
				go func() {
					defer pw.Done()
					for k := range perNode {
						if _, err := b.Publish(ctx, fmt.Sprintf("e-%d-%d", i, k), fmt.Appendf(nil, "%d-%d", i, k)); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			pw.Wait()
			fw.Wait()
			for i := range seen {
				if len(seen[i]) != total || !slices.Equal(seen[i], seen[0]) {
					t.Fatalf("follower %d saw %d events, in another order than follower 0 (%d)", i, len(seen[i]), len(seen[0]))
				}
			}
			// Resume from the 10th event's cursor: the rest, in order.
			var cursors []uint64
			var rest []string
			if err := buses[0].Follow(ctx, 0, func(cur uint64, _ []byte) error {
				cursors = append(cursors, cur)
				if len(cursors) == total {
					return natsx.ErrStop
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := buses[h.Len()-1].Follow(ctx, cursors[9], func(_ uint64, data []byte) error {
				rest = append(rest, string(data))
				if len(rest) == total-10 {
					return natsx.ErrStop
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rest, seen[0][10:]) {
				t.Fatalf("resumed from cursor %d: %v, want %v", cursors[9], rest, seen[0][10:])
			}
			end, err := buses[0].End(ctx)
			if err != nil || end != cursors[total-1] {
				t.Fatalf("end %d (%v), last cursor %d", end, err, cursors[total-1])
			}
			// A publish retried with its id is stored once.
			again, err := buses[len(buses)-1].Publish(ctx, "e-0-0", []byte("0-0"))
			if want := cursors[slices.Index(seen[0], "0-0")]; err != nil || again != want {
				t.Fatalf("retried publish: cursor %d (%v), want %d", again, err, want)
			}
			if end2, _ := buses[0].End(ctx); end2 != end {
				t.Fatalf("retried publish stored again: end %d, was %d", end2, end)
			}
		})
	}
}

// Two projects on one hub have a bus each: an event of one is never
// followed from the other, and each has its own cursors.
func TestProjectsHaveABusEach(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	c := h.Connect(0)
	a, err := natsbus.Open(ctx, c, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := natsbus.Open(ctx, c, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Publish(ctx, "e1", []byte("for a")); err != nil {
		t.Fatal(err)
	}
	curB, err := b.Publish(ctx, "e1", []byte("for b")) // the same id: another project's
	if err != nil {
		t.Fatal(err)
	}
	if curB != 1 {
		t.Fatalf("b's first event has cursor %d", curB)
	}
	if end, err := a.End(ctx); err != nil || end != 1 {
		t.Fatalf("a's end %d, %v: want 1", end, err)
	}
	var got []string
	if err := b.Follow(ctx, 0, func(_ uint64, data []byte) error {
		got = append(got, string(data))
		return natsx.ErrStop
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"for b"}) {
		t.Fatalf("b follows %q", got)
	}
	if _, err := natsbus.Open(ctx, c, "B_x"); err == nil {
		t.Fatal("a project name with an underscore opened a bus")
	}
}

// pm's bus on the hub (bus.Seq over Bus): events published on one node are
// tailed, filtered and read back before a cursor on another; a follower on
// another node resumes from a cursor as a string, exactly once; after a
// reset an old cursor goes on with what is published next, and Before
// finds nothing of what was purged.
func TestSeqBusAcrossNodes(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			open := func(i int) *bus.Seq {
				b, err := natsbus.Open(ctx, h.Connect(i), "p")
				if err != nil {
					t.Fatal(err)
				}
				return natsbus.NewBus(ctx, b, nil, secret.New("sk-hidden-value-1"))
			}
			pub, sub := open(0), open(h.Len()-1)
			if ds, end, err := sub.Tail(5); err != nil || len(ds) != 0 || end != (bus.Cursor{}) {
				t.Fatalf("Tail of an empty bus = %v, %v, %v", ds, end, err)
			}
			for i := range 40 {
				kind := bus.EvMessage
				if i%10 == 0 {
					kind = bus.EvTaskCreated
				}
				if err := pub.Publish(bus.Event{Kind: kind, Text: fmt.Sprintf("e%d sk-hidden-value-1", i)}); err != nil {
					t.Fatal(err)
				}
			}
			ds, end, err := sub.TailWhere(3, func(ev bus.Event) bool { return ev.Kind == bus.EvTaskCreated })
			if err != nil || len(ds) != 3 || ds[0].Event.Text != "e10 [masked]" || ds[2].Event.Text != "e30 [masked]" {
				t.Fatalf("TailWhere = %+v, %v", ds, err)
			}
			before, err := sub.Before(end, 2)
			if err != nil || len(before) != 2 || before[1].Event.Text != "e39 [masked]" {
				t.Fatalf("Before(end, 2) = %+v, %v", before, err)
			}
			var mid bus.Cursor
			n := 0
			for d, err := range sub.Subscribe(ctx, bus.Cursor{}) {
				if err != nil {
					t.Fatal(err)
				}
				if n++; n == 25 {
					mid = d.Next
					break
				}
			}
			saved, err := bus.ParseCursor(mid.String())
			if err != nil {
				t.Fatal(err)
			}
			var rest []string
			for d, err := range pub.Subscribe(ctx, saved) {
				if err != nil {
					t.Fatal(err)
				}
				if rest = append(rest, d.Event.Text); len(rest) == 15 {
					break
				}
			}
			if rest[0] != "e25 [masked]" || rest[14] != "e39 [masked]" {
				t.Fatalf("resumed at %v: %v", mid, rest)
			}
			if err := pub.Reset(); err != nil {
				t.Fatal(err)
			}
			if got, err := sub.Before(end, 5); err != nil || len(got) != 0 {
				t.Fatalf("Before an old cursor after a reset = %+v, %v", got, err)
			}
			if err := pub.Publish(bus.Event{Kind: bus.EvMessage, Text: "after"}); err != nil {
				t.Fatal(err)
			}
			for d, err := range sub.Subscribe(ctx, saved) {
				if err != nil || d.Event.Text != "after" {
					t.Fatalf("after a reset an old cursor reads %+v, %v", d, err)
				}
				break
			}
		})
	}
}
