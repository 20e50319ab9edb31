package lease_test

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/lease"
)

// A write conditional on the lease in the stream itself (AppendWith: the
// fence mark and the write as one atomic batch): holder A's lease ages
// out and B takes it, its takeover mark stored after A's mark was sent
// and before A's write commits (where the two-step write, a mark then
// the write, lets the write through): the batch is refused as a whole
// (ErrFenced) and stores nothing.
func TestAppendWithRefusesAFencedWrite(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			ca, cb := h.Connect(0), h.Connect(h.Len()-1)
			if _, err := ca.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowAtomicPublish: true}); err != nil {
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
			const key, fence, roomSubj = "cedar_a1b2", "t.fence.cedar_a1b2", "t.room.r1"
			a, err := la.Acquire(ctx, key, "host-a")
			if err != nil {
				t.Fatal(err)
			}
			wa, err := a.Writer(ctx, "T", fence)
			if err != nil {
				t.Fatal(err)
			}
			roomLast := uint64(0)
			say := func(text string) *nats.Msg {
				m := nats.NewMsg(roomSubj)
				m.Data = []byte(text)
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(roomLast, 10))
				return m
			}
			// Held: the batch is stored, mark and message.
			seq, err := wa.AppendWith(ctx, []byte("pm say"), say("a: held"))
			if err != nil {
				t.Fatal(err)
			}
			roomLast = seq

			// The race: A's lease ages out and B takes it while A's write is
			// on its way (after its mark was sent, before it commits).
			takeover := func() {
				if err := lb.WaitFree(ctx, key); err != nil {
					t.Error(err)
					return
				}
				b, err := lb.Acquire(ctx, key, "host-b")
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := b.Writer(ctx, "T", fence); err != nil {
					t.Error(err)
				}
			}
			lease.SetBeforeCommit(takeover)
			_, err = wa.AppendWith(ctx, []byte("pm say"), say("a: after the takeover"))
			lease.SetBeforeCommit(nil)
			if !errors.Is(err, lease.ErrFenced) {
				t.Fatalf("the fenced holder's batch: %v, want ErrFenced", err)
			}

			// The room holds A's held write only.
			s, err := cb.JS.Stream(ctx, "T")
			if err != nil {
				t.Fatal(err)
			}
			last, err := s.GetLastMsgForSubject(ctx, roomSubj)
			if err != nil {
				t.Fatal(err)
			}
			if string(last.Data) != "a: held" || last.Sequence != roomLast {
				t.Fatalf("the room's last is %q (seq %d), want A's held write (seq %d)", last.Data, last.Sequence, roomLast)
			}
		})
	}
}

// One holder's calls run at once (a host's broker runs up to 64 of its
// agent's commands together): each fence mark, alone (Append) or with a
// write (AppendWith), expects the holder's last one, so two at once used
// to refuse one of them as a takeover's (ErrFenced: the host fenced
// itself for nothing). They go one at a time per Writer: none is
// refused. On a stream that allows rollups (a project's rooms) marks
// replace the ones before: the fence subject holds at most RollupEvery,
// however many calls were marked, while the writes' subject keeps all.
func TestOneHoldersConcurrentAppends(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			c := h.Connect(0)
			if _, err := c.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowAtomicPublish: true, AllowRollup: true}); err != nil {
				t.Fatal(err)
			}
			l, err := lease.Open(ctx, c, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			le, err := l.Acquire(ctx, "cedar_a1b2", "host-a")
			if err != nil {
				t.Fatal(err)
			}
			const fence, writes, callers, each = "t.fence.cedar_a1b2", "t.log", 6, 7
			w, err := le.Writer(ctx, "T", fence)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errc := make(chan error, callers*each)
			for i := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range each {
						if i%2 == 0 {
							errc <- w.Append(ctx, []byte("pm status"))
							continue
						}
						m := nats.NewMsg(writes)
						m.Data = []byte(fmt.Sprintf("%d.%d", i, j))
						m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("w%d.%d", i, j))
						_, err := w.AppendWith(ctx, []byte("pm say"), m)
						errc <- err
					}
				}()
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				if err != nil {
					t.Fatalf("a holder's own call was refused: %v", err)
				}
			}
			s, err := c.JS.Stream(ctx, "T")
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctx, jetstream.WithSubjectFilter("t.>"))
			if err != nil {
				t.Fatal(err)
			}
			// The takeover mark and callers*each marks: rolled up at the
			// first and every RollupEvery-th after it.
			if got, want := info.State.Subjects[fence], uint64((1+callers*each-1)%lease.RollupEvery+1); got != want {
				t.Fatalf("the fence subject holds %d marks, want %d (at most %d: rolled up)", got, want, lease.RollupEvery)
			}
			if got, want := info.State.Subjects[writes], uint64(callers/2*each); got != want {
				t.Fatalf("the writes' subject holds %d, want %d", got, want)
			}
		})
	}
}
