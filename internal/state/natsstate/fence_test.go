package natsstate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/room"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/statetest"
)

// Which fence a project's room appends have is its rooms stream's, as it
// was made; pm never changes it. A project made now holds its agents'
// fence marks in the rooms stream (no fence stream of its own): a host's
// marks are rolled up there (lease.RollupEvery at most per agent),
// pm reset purges the rooms and not the marks (the host goes on), and a
// say carried by a lease another host took is refused, nothing stored.
// A project whose rooms stream was made before keeps its fence stream
// and the two-step write: the same say is stored (fenced by the host's
// clock only), and its rooms stream is as it was.
func TestProjectsKeepTheirRoomFence(t *testing.T) {
	h := hubtest.Single(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := h.Connect(0)
	for _, tc := range []struct {
		project string
		before  bool // its rooms stream made before the fence moved there
	}{{"fnew", false}, {"fold", true}} {
		t.Run(tc.project, func(t *testing.T) {
			names, err := natsx.ProjectNames(tc.project)
			if err != nil {
				t.Fatal(err)
			}
			if tc.before {
				if _, err := room.OpenNamed(ctx, c, names.Rooms, names.RoomPrefix); err != nil {
					t.Fatal(err)
				}
			}
			st := openOn(t, ctx, h, 0, tc.project)
			if st.RoomsFenced() == tc.before {
				t.Fatalf("RoomsFenced %v for a project made before: %v", st.RoomsFenced(), tc.before)
			}
			const name = "oak_f00d"
			le, err := st.HoldAgent(ctx, name, "host-a")
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := le.Fence(ctx, "pm status"); err != nil {
					t.Fatal(err)
				}
			}
			_, ferr := c.JS.Stream(ctx, names.Fence)
			if tc.before != (ferr == nil) {
				t.Fatalf("the fence stream %s: %v (made before: %v)", names.Fence, ferr, tc.before)
			}
			rooms, err := c.JS.Stream(ctx, names.Rooms)
			if err != nil {
				t.Fatal(err)
			}
			info, err := rooms.Info(ctx, jetstream.WithSubjectFilter(names.FencePrefix+">"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.before {
				if info.Config.AllowAtomicPublish || len(info.Config.Subjects) != 1 {
					t.Fatalf("a rooms stream made before was changed: %+v", info.Config)
				}
			} else if n := info.State.Subjects[names.FencePrefix+name]; n != 4 {
				t.Fatalf("the agent's fence subject holds %d marks, want 4 (the takeover mark, which rolled the subject up, and 3)", n)
			}

			tk, ph := statetest.OpenRoom(t, st, name, 10)
			say := func(text string) error {
				m := state.Message{ID: ids.Default.New(ids.Message), PhaseID: ph.ID, Author: name, Content: text}
				return st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error { return state.AppendFenced(tx, m, le) })
			}
			if err := say("held"); err != nil {
				t.Fatal(err)
			}
			if !tc.before {
				if err := st.WithTasks(st.ResetHeld); err != nil {
					t.Fatal(err)
				}
				if err := le.Fence(ctx, "pm status"); err != nil {
					t.Fatalf("the holder's mark after pm reset: %v", err)
				}
				tk, ph = statetest.OpenRoom(t, st, name, 10)
			}
			// Another host takes the lease (as after it expired on the hub).
			kv, err := c.JS.KeyValue(ctx, names.Agents)
			if err != nil {
				t.Fatal(err)
			}
			if err := kv.Delete(ctx, "agent."+name); err != nil {
				t.Fatal(err)
			}
			if _, err := st.HoldAgent(ctx, name, "host-b"); err != nil {
				t.Fatal(err)
			}
			err = say("after the takeover")
			n, cerr := st.MessageCount(tk.ID, ph.ID)
			if cerr != nil {
				t.Fatal(cerr)
			}
			switch {
			case tc.before && (err != nil || n != 2):
				t.Fatalf("two-step write: %v, %d messages; want the say stored (fenced by the host's clock only)", err, n)
			case !tc.before && (!errors.Is(err, state.ErrLeaseLost) || n != 0):
				t.Fatalf("fenced by the hub: %v, %d messages after pm reset; want ErrLeaseLost and none", err, n)
			}
		})
	}
}
