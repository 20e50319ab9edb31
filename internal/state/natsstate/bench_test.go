package natsstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/room"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// BenchmarkReadMailbox: a follower's read of what came since its position
// (each wake-up of a resident's Serve, inbox.Call's wait), one new entry,
// eight and 64, on one node and on three. Each iteration posts them (not
// timed) and reads from the position after the last read.
func BenchmarkReadMailbox(b *testing.B) {
	for _, set := range hubtest.Sets() {
		for _, fresh := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/new=%d", set.Name, fresh), func(b *testing.B) {
				h := set.Start(b)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				st, err := natsstate.Open(ctx, h.Connect(0), "bench")
				if err != nil {
					b.Fatal(err)
				}
				const agent = "oak_0001"
				var pos int64
				entry := map[string]string{"kind": "request", "text": "a request of a few words"}
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					for range fresh {
						if err := st.Post(agent, entry); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					got := 0
					if pos, err = st.ReadMailbox(agent, pos, func(json.RawMessage, int64) error { got++; return nil }); err != nil {
						b.Fatal(err)
					}
					if got != fresh {
						b.Fatalf("read %d entries, want %d", got, fresh)
					}
				}
			})
		}
	}
}

// BenchmarkSay: a say of an exec agent as its host makes it on a hub,
// on one node and on three: the guard's fence mark, then the say's room
// transaction (WithPhase: the room's section, the phase record, the
// append). "two-step" is a project made before the hub fenced room
// appends (the mark in PM_FENCE_P, a plain append); "batch" a project
// made now (the mark in the rooms stream, the append and a second mark
// one atomic batch). "append" is the transaction alone (no fence: a
// person's say); "mark-rollup" a mark alone in a project made now (the
// rooms stream, each mark replacing the one before), "mark-fence-stream"
// in one made before (PM_FENCE_P, one message kept per subject).
func BenchmarkSay(b *testing.B) {
	for _, set := range hubtest.Sets() {
		b.Run(set.Name, func(b *testing.B) {
			h := set.Start(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := h.Connect(0)
			open := func(project string, before bool) (*natsstate.State, state.AgentLease, *state.Task, *state.Phase) {
				names, _ := natsx.ProjectNames(project)
				if before {
					if _, err := room.OpenNamed(ctx, c, names.Rooms, names.RoomPrefix); err != nil {
						b.Fatal(err)
					}
				}
				st, err := natsstate.Open(ctx, c, project)
				if err != nil {
					b.Fatal(err)
				}
				le, err := st.HoldAgent(ctx, "oak_0001", "host-a")
				if err != nil {
					b.Fatal(err)
				}
				var tk *state.Task
				if err := st.WithTasks(func() error {
					tk, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
						return &state.Task{ID: id, Description: "bench", Owner: "oak_0001", Status: state.TaskActive, BlockedBy: []string{}}, nil, nil
					})
					return err
				}); err != nil {
					b.Fatal(err)
				}
				ph, err := st.CreatePhase(tk.ID, func(_ *state.Task, _ []*state.Phase, id string) (*state.Phase, error) {
					return &state.Phase{ID: id, TaskID: tk.ID, Name: "bench", MessageLimit: 1 << 30, Roles: []string{}, Status: state.PhaseActive}, nil
				}, nil)
				if err != nil {
					b.Fatal(err)
				}
				return st, le, tk, ph
			}
			say := func(b *testing.B, st *natsstate.State, le state.AgentLease, tk *state.Task, ph *state.Phase, mark bool, fence state.AgentLease) {
				for b.Loop() {
					if mark {
						if err := le.Fence(ctx, "pm say"); err != nil {
							b.Fatal(err)
						}
					}
					m := state.Message{ID: ids.Default.New(ids.Message), PhaseID: ph.ID, Author: "oak_0001", Content: "a say of a few words"}
					if err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error { return state.AppendFenced(tx, m, fence) }); err != nil {
						b.Fatal(err)
					}
				}
			}
			oldSt, oldLe, oldTk, oldPh := open("bold", true)
			newSt, newLe, newTk, newPh := open("bnew", false)
			b.Run("two-step", func(b *testing.B) { say(b, oldSt, oldLe, oldTk, oldPh, true, oldLe) })
			b.Run("batch", func(b *testing.B) { say(b, newSt, newLe, newTk, newPh, true, newLe) })
			b.Run("append", func(b *testing.B) { say(b, newSt, newLe, newTk, newPh, false, nil) })
			mark := func(le state.AgentLease) func(b *testing.B) {
				return func(b *testing.B) {
					for b.Loop() {
						if err := le.Fence(ctx, "pm say"); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.Run("mark-rollup", mark(newLe))       // in the rooms stream, replacing the one before
			b.Run("mark-fence-stream", mark(oldLe)) // in PM_FENCE_P, one per subject kept
		})
	}
}
