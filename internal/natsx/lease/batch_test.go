package lease_test

import (
	"errors"
	"strconv"
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
