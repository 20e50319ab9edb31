package natsstate_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// A follower's read of the one message appended since its position (each
// wake-up of pm chat --follow, pm wait) is the room's last message, which
// the count already fetched: it makes no consumer. A consumer per read was
// made on a random node of the cluster, and one whose first pull went
// unanswered delivered nothing until its missing heartbeats reset it (10 s
// each time): the bench's first say on a three-node hub once reached the
// follower on another node not within a minute (issue 24).
func TestReadingTheNewMessageMakesNoConsumer(t *testing.T) {
	h := hubtest.Three(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := natsstate.Open(ctx, h.Connect(1), "follow")
	if err != nil {
		t.Fatal(err)
	}
	var tk *state.Task
	err = st.WithTasks(func() error {
		tk, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: "follow", Owner: "oak_0001", Status: state.TaskActive, BlockedBy: []string{}}, nil, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ph, err := st.CreatePhase(tk.ID, func(_ *state.Task, _ []*state.Phase, id string) (*state.Phase, error) {
		return &state.Phase{ID: id, TaskID: tk.ID, Name: "p", MessageLimit: 10, Roles: []string{}, Status: state.PhaseActive}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	names, err := natsx.ProjectNames("follow")
	if err != nil {
		t.Fatal(err)
	}
	rooms, err := h.Connect(0).JS.Stream(ctx, names.Rooms)
	if err != nil {
		t.Fatal(err)
	}
	consumers := func() int {
		info, err := rooms.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Consumers
	}
	var want []string
	for i, pos := range []int{0, 1, 2} {
		m := state.Message{ID: ids.Default.New(ids.Message), PhaseID: ph.ID, Author: "oak_0001", Content: "message " + string(rune('a'+i))}
		if err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error { return tx.Append(m) }); err != nil {
			t.Fatal(err)
		}
		want = append(want, m.ID)
		before := consumers()
		var got []string
		var v state.MessageView
		next, err := st.ReadRoom(tk.ID, ph.ID, pos, &v, func([]byte) error { got = append(got, v.ID); return nil })
		if err != nil || next != pos+1 || !slices.Equal(got, want[pos:]) {
			t.Fatalf("ReadRoom from %d: %v, next %d, %v; want %v, next %d", pos, got, next, err, want[pos:], pos+1)
		}
		if after := consumers(); after != before {
			t.Fatalf("ReadRoom from %d of the one new message made %d consumers on the rooms' stream", pos, after-before)
		}
	}
}
