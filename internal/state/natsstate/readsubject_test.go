package natsstate_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// A follower's read of the few entries posted since its position (each
// wake-up of a resident's Serve, of inbox.Call's wait) makes no consumer:
// the subject's last entry, then a get per entry. Every read made an
// ordered consumer before (on any node of the cluster: the room's read
// once stalled 10 s on one, issue 24). A long read still reads every
// entry, in order, through one.
func TestReadingFewNewEntriesMakesNoConsumer(t *testing.T) {
	h := hubtest.Three(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := natsstate.Open(ctx, h.Connect(1), "entries")
	if err != nil {
		t.Fatal(err)
	}
	names, err := natsx.ProjectNames("entries")
	if err != nil {
		t.Fatal(err)
	}
	mail, err := h.Connect(0).JS.Stream(ctx, names.Mail)
	if err != nil {
		t.Fatal(err)
	}
	consumers := func() int {
		info, err := mail.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Consumers
	}
	const agent = "oak_0001"
	var pos int64
	sent := 0
	for _, fresh := range []int{1, 1, 3, 8, 32, 40} {
		for range fresh {
			sent++
			if err := st.Post(agent, map[string]int{"n": sent}); err != nil {
				t.Fatal(err)
			}
			// Another agent's entry between: positions are the stream's.
			if err := st.Post("elm_0002", map[string]int{"n": sent}); err != nil {
				t.Fatal(err)
			}
		}
		before := consumers()
		var got []int
		next, err := st.ReadMailbox(agent, pos, func(raw json.RawMessage, _ int64) error {
			var e struct{ N int }
			if err := json.Unmarshal(raw, &e); err != nil {
				return err
			}
			got = append(got, e.N)
			return nil
		})
		if err != nil || len(got) != fresh || got[0] != sent-fresh+1 || got[len(got)-1] != sent {
			t.Fatalf("read from %d: %v (%v), want %d..%d", pos, got, err, sent-fresh+1, sent)
		}
		for i := 1; i < len(got); i++ {
			if got[i] != got[i-1]+1 {
				t.Fatalf("read from %d out of order: %v", pos, got)
			}
		}
		pos = next
		if made := consumers() - before; fresh <= 32 && made != 0 {
			t.Fatalf("reading %d new entries made %d consumers on the mail stream", fresh, made)
		}
		if again, err := st.ReadMailbox(agent, pos, func(json.RawMessage, int64) error { t.Fatal("an entry past the end"); return nil }); err != nil || again != pos {
			t.Fatalf("read at the end: %d, %v; want %d", again, err, pos)
		}
	}
}
