package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// TestRoomsTailDoesNotDecodeAll: reading a room with a small tail decodes
// what the tail holds, not the whole room, and the count stays exact. The
// count still looks at each line after the count mark (here all of them:
// the test writes no mark), without decoding it: at most about one
// allocation a line, where decoding a message costs ~10.
func TestRoomsTailDoesNotDecodeAll(t *testing.T) {
	s := newStore(t)
	sess := &Session{Store: s, State: fsstate.New(s), Actor: store.Human}
	addTask(t, s, "tk-000001", store.TaskActive, 0)
	ph := addPhase(t, s, "tk-000001", "ph-000001", store.PhaseActive, 0)
	// A room big enough for what the test writes: a full one is closed
	// (store.RoomClosedBy), and Rooms shows a closed room's count only.
	ph.MessageLimit = 2000
	if err := os.WriteFile(s.PhasePath("tk-000001", "ph-000001"), mustJSON(t, ph), 0o644); err != nil {
		t.Fatal(err)
	}
	written := 0
	appendMessages := func(n int) {
		f, err := os.OpenFile(s.MessagesPath("tk-000001", "ph-000001"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		for range n {
			written++
			m := store.Message{ID: fmt.Sprintf("msg-%06d", written), PhaseID: "ph-000001", Author: "designer",
				Content: "a message of some length, like a real one", Timestamp: base}
			if err := enc.Encode(m); err != nil {
				t.Fatal(err)
			}
		}
		if written%2 == 0 {
			fmt.Fprintln(f, `{"stray":"a hand-written value: not a message"}`)
		}
	}
	const tail = 2
	allocs := func() float64 {
		return testing.AllocsPerRun(3, func() {
			rooms, err := Rooms(context.Background(), sess, RoomsInput{Tail: tail})
			if err != nil || len(rooms) != 1 {
				t.Fatalf("Rooms = %+v, %v", rooms, err)
			}
			r := rooms[0]
			if r.Count != written || len(r.Messages) != tail || r.Messages[tail-1].ID != fmt.Sprintf("msg-%06d", written) {
				t.Fatalf("room: count %d, last %+v; want count %d and the last %d", r.Count, r.Messages, written, tail)
			}
		})
	}
	const small, large = 100, 1100 // messages
	appendMessages(small)
	before := allocs()
	appendMessages(large - small)
	perMessage := (allocs() - before) / (large - small)
	t.Logf("%.2f allocations per message", perMessage)
	if perMessage > 2 {
		t.Errorf("Rooms with a tail of %d allocates %.1f more per message in the room, want at most 2 (no decoding)", tail, perMessage)
	}
}
