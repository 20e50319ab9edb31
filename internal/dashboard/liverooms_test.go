package dashboard

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
)

// lockedBuffer collects the store's warnings, written by server goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSnapshotReadsNoClosedRoom: /api/state shows a closed phase's count
// only, so it must not read that phase's messages (its history is in the
// task's detail). A torn line in the closed room is the witness: reading
// its messages reports it, counting them does not.
func TestSnapshotReadsNoClosedRoom(t *testing.T) {
	warn := &lockedBuffer{}
	r := newRig(t, func(c *Config) { c.Session.Store.Warn = warn }) // before the server reads it
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "build it", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	first, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 5, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: first.Phase.ID, Message: "said in the first phase"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.EndPhase(t.Context(), r.sess, ops.EndInput{Task: tk.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Build", Limit: 5, Roles: []string{"developer"}}); err != nil {
		t.Fatal(err)
	}
	closedLog := r.s.MessagesPath(tk.ID, first.Phase.ID)
	f, err := os.OpenFile(closedLog, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"torn\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := len(warn.String())

	snap := r.snapshot()
	var closed *RoomView
	for i, room := range snap.Rooms {
		if room.Phase.ID == first.Phase.ID {
			closed = &snap.Rooms[i]
		}
	}
	if closed == nil || closed.Count != 1 || closed.Messages != nil {
		t.Fatalf("closed room = %+v; want its count (1) and no messages", closed)
	}
	if got := warn.String()[before:]; strings.Contains(got, closedLog) {
		t.Errorf("the snapshot read the closed room's messages: %s", got)
	}
}

// A frame says "changes" exactly for the kinds after which a view reads
// again (ops.ChangesView): the open task detail's trigger.
func TestFrameChangesFlag(t *testing.T) {
	for _, tc := range []struct {
		kind bus.Kind
		want bool
	}{
		{bus.EvTaskCreated, true}, {bus.EvPhaseClosed, true}, {bus.EvRequestAsked, true},
		{bus.EvMessage, true}, {bus.EvAgentTurn, true},
		{bus.EvToolCall, false}, {bus.EvToolResult, false}, {bus.EvAgentThink, false}, {bus.EvAgentOutput, false},
		{bus.EvAgentActivity, false}, {bus.EvToolDocPreview, false}, {bus.EvToolDocDecision, false},
	} {
		b := eventFrame(bus.Delivery{Event: bus.Event{Kind: tc.kind}, Raw: []byte(`{}`)}, nil, nil)
		var f struct {
			Changes bool `json:"changes"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v in %s", tc.kind, err, b)
		}
		if f.Changes != tc.want {
			t.Errorf("%s: changes = %v, want %v", tc.kind, f.Changes, tc.want)
		}
	}
}
