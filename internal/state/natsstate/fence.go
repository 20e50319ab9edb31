package natsstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx/lease"
	"github.com/plasmodium/pm/internal/natsx/room"
	"github.com/plasmodium/pm/internal/state"
)

// A say's room append, fenced by the hub (issue 24). A project whose rooms
// stream was made by this pm holds its agents' fence subjects
// (pm.P.fence.NAME) in the rooms stream, which takes atomic batches and
// rollups (room.OpenFenced): a host's fence marks, each replacing the one
// before on its subject (lease.Writer), and a say's message with its
// host's mark as one batch, stored all or nothing. A project made before
// keeps its fence stream PM_FENCE_P and the two-step write (the host's
// mark before the call, then the plain append): pm never changes an
// existing stream's configuration. Which one a project has is read from
// its rooms stream at open (room.Rooms.Batched; its marks go where
// room.Rooms.Fences says); pm doctor says it too.

var _ state.FencedRoomTx = (*roomTx)(nil)

// fenceStream is the stream of the project's fence marks: the rooms
// stream when it holds them, else PM_FENCE_P.
func (s *State) fenceStream() string {
	if s.rooms.Fences() != "" {
		return s.roomS
	}
	return s.names.Fence
}

// RoomsFenced reports whether the project's room appends are fenced by
// the hub (an agent's say and its host's fence mark one atomic batch)
// rather than by the host's clock only.
func (s *State) RoomsFenced() bool { return s.rooms.Batched() }

// sayMark is the fence mark a say's batch carries.
const sayMark = "pm say"

// AppendFenced is Append whose every attempt is one atomic batch of the
// message and fence's next mark (lease.Writer.AppendWith): refused for
// good once a newer holder's takeover mark is stored (ErrLeaseLost),
// retried like Append when the room moved on. Without fence subjects in
// the rooms stream it is Append.
func (tx *roomTx) AppendFenced(msg state.Message, fence state.AgentLease) error {
	if !tx.s.RoomsFenced() {
		return tx.Append(msg)
	}
	al, ok := fence.(*agentLease)
	if !ok || al.stream != tx.s.roomS {
		return fmt.Errorf("natsstate: a room append of project %s carried a lease not held on its hub project", tx.s.names.Project)
	}
	publish := al.w.Publish([]byte(sayMark))
	return tx.append(msg, func(op context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
		ack, err := publish(op, m)
		if errors.Is(err, lease.ErrFenced) {
			al.refused(err)
			return nil, state.Errorf(state.ErrLeaseLost, "nothing: this agent runs again on the host that holds its lease",
				"refused by the hub: another host holds agent %s's lease (%v); the message was not stored", strings.TrimPrefix(al.le.Key, "agent."), err)
		}
		return ack, err
	})
}

// append adds msg to the room through publish (nil: a plain publish).
func (tx *roomTx) append(msg state.Message, publish room.Publish) error {
	if tx.phase.Status != state.PhaseActive {
		return state.Errorf(state.ErrClosed, "the owner may open a new phase", "phase %s is closed (%s)", tx.phase.ID, tx.phase.CloseReason)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	name := tx.s.roomOf(tx.phase.TaskID, tx.phase.ID)
	if publish == nil {
		_, err = tx.s.rooms.Append(tx.s.ctx, name, msg.ID, b, tx.phase.MessageLimit)
	} else {
		_, err = tx.s.rooms.AppendVia(tx.s.ctx, name, msg.ID, b, tx.phase.MessageLimit, publish)
	}
	if errors.Is(err, room.ErrFull) {
		return state.Errorf(state.ErrRoomFull, "the owner may open a new phase", "phase %s holds its %d messages", tx.phase.ID, tx.phase.MessageLimit)
	}
	return err
}
