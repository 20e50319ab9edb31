package phase

import (
	"strings"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// MaxMessage bounds one chat message (bytes). A room is for discussion, not files.
const MaxMessage = 16 << 10

// Say posts content to a phase. Lock, check, count, append and (at the limit)
// close form one critical section under the messages lock, so the phase holds
// exactly message_limit messages however many writers race.
func Say(s *store.Store, st state.State, actor store.Actor, taskID, phaseID, content string) (msg store.Message, closed bool, err error) {
	return SayFenced(s, st, actor, nil, taskID, phaseID, content)
}

// SayFenced is Say whose append carries fence, the lease of the host whose
// agent's call this is (state.AppendFenced: on a hub whose rooms take it,
// the message is stored only while that host still holds the lease).
func SayFenced(s *store.Store, st state.State, actor store.Actor, fence state.AgentLease, taskID, phaseID, content string) (msg store.Message, closed bool, err error) {
	if strings.TrimSpace(content) == "" {
		return msg, false, errs.Usagef(`pm say "your message"`, "empty message")
	}
	if len(content) > MaxMessage || !utf8.ValidString(content) {
		return msg, false, errs.Usagef("keep messages under 16 KiB of UTF-8 text; put long material in a file", "message of %d bytes is too long or not UTF-8", len(content))
	}
	content = s.Secrets.Mask(content) // the room is state: no secret reaches it
	err = st.WithPhase(taskID, phaseID, func(tx state.RoomTx) error {
		ph := tx.Phase()
		if ph.Status != store.PhaseActive {
			return closedErr(ph)
		}
		n, err := tx.Count()
		if err != nil {
			return err
		}
		// WithPhase derived the room (store.RoomClosedBy): a full log a
		// crash left open was closed before we got here, so n < limit.
		msg = store.Message{
			ID: s.IDs.New(ids.Message), PhaseID: phaseID, Author: actor.Name, Role: actor.Role(),
			Content: content, Timestamp: s.Now().UTC(),
		}
		if err := state.AppendFenced(tx, msg, fence); err != nil {
			return err
		}
		s.Notify(bus.Event{Kind: bus.EvMessage, Actor: actor.Name, TaskID: taskID, PhaseID: phaseID, MsgID: msg.ID, Text: content,
			Data: bus.MessagePosted{N: n + 1, Limit: ph.MessageLimit}})
		if n+1 >= ph.MessageLimit {
			closed = true
			return closeHeld(s, actor, tx, store.CloseLimit)
		}
		return nil
	})
	return msg, closed, err
}

func closedErr(ph *store.Phase) error {
	return errs.Statef("read it with 'pm chat --phase "+ph.ID+"'; the owner may open a new phase",
		"phase %s (%q) is closed (%s)", ph.ID, ph.Name, ph.CloseReason)
}
