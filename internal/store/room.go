package store

import (
	"os"
	"time"

	"github.com/plasmodium/pm/internal/bus"
)

// A room's state is derived, not stored: phase.json's status is a cache of
// it. RoomClosedBy is the one definition every reader and writer uses, so a
// crash between two writes (a say killed between its append and the close,
// a pm kill killed between marking its tasks and closing their phases)
// cannot leave a room that some see open and others closed.

// RoomClosedBy reports why the room of p is closed, or "" when it is open:
// it is closed when phase.json says so, when its log holds message_limit
// messages (messages is that count, MessageCount's definition), or when its
// task is no longer active (task is the task's status; "" when it could not
// be read, which closes nothing).
func RoomClosedBy(p *Phase, messages int, task TaskStatus) CloseReason {
	switch {
	case p.Status != PhaseActive:
		if p.CloseReason == "" {
			return CloseEnded // closed by hand, without a reason
		}
		return p.CloseReason
	case messages >= p.MessageLimit:
		return CloseLimit
	case task == TaskKilled:
		return CloseKilled
	case task != "" && task != TaskActive:
		return CloseTask
	}
	return ""
}

// closedBy derives the room state of p, read without its lock: its count
// from the log (and its count mark) and its task's status.
func (s *Store) closedBy(p *Phase) CloseReason {
	if p.Status != PhaseActive {
		return RoomClosedBy(p, 0, "")
	}
	n, err := s.roomCount(p.TaskID, p.ID)
	if err != nil {
		n = 0 // unreadable log: it closes nothing
	}
	return RoomClosedBy(p, n, s.taskStatus(p.TaskID))
}

// roomCount counts the room's messages without its lock (countIn: from the
// count mark, which needs none).
func (s *Store) roomCount(taskID, phaseID string) (int, error) {
	f, err := os.Open(s.MessagesPath(taskID, phaseID))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, _, err := s.countIn(taskID, phaseID, f)
	return n, err
}

// taskStatus is the task's status, "" when it cannot be read.
func (s *Store) taskStatus(taskID string) TaskStatus {
	t, err := s.Task(taskID)
	if err != nil {
		return ""
	}
	return t.Status
}

// settleRoom returns p as its room really is. An active record whose room
// is closed (RoomClosedBy) is repaired under the phase's lock (WithPhase
// re-derives there, so a limit raised or a message added meanwhile is
// seen), and the repaired record returned; when the repair cannot be made
// (a read-only state directory) the derived state is returned all the same.
func (s *Store) settleRoom(p *Phase) *Phase {
	if p.Status != PhaseActive {
		return p
	}
	reason := s.closedBy(p)
	if reason == "" {
		return p
	}
	var out *Phase
	if err := s.WithPhase(p.TaskID, p.ID, func(tx *PhaseTx) error { out = tx.Phase; return nil }); err == nil && out != nil {
		return out
	}
	c := *p
	c.Status, c.CloseReason = PhaseClosed, reason
	return &c
}

// settleHeld derives the room state of tx.Phase under its lock and, when
// the record says active but the room is closed, writes the close (the
// crash's unfinished step) before the caller sees the record.
func (tx *PhaseTx) settleHeld() error {
	if tx.Phase.Status != PhaseActive {
		return nil
	}
	n, err := tx.Count()
	if err != nil {
		return err
	}
	reason := RoomClosedBy(tx.Phase, n, tx.s.taskStatus(tx.Phase.TaskID))
	if reason == "" {
		return nil
	}
	return tx.Close(Actor{Name: SystemActor}, reason)
}

// SystemActor is who a close made by a repair is announced by.
const SystemActor = "pm"

// Close marks the phase closed for reason inside its critical section and
// announces it (phase.closed, with the count and the limit).
func (tx *PhaseTx) Close(actor Actor, reason CloseReason) error {
	if err := tx.Update(Closing(tx.s.Now(), reason)); err != nil {
		return err
	}
	n, _ := tx.Count()
	tx.s.Notify(PhaseClosedEvent(actor, tx.Phase, n))
	return nil
}

// Closing is the change that closes a phase record at now for reason, the
// one every close writes (here and phase.Close through the state's room
// transaction).
func Closing(now time.Time, reason CloseReason) func(p *Phase) {
	at := now.UTC()
	return func(p *Phase) { p.Status, p.ClosedAt, p.CloseReason = PhaseClosed, &at, reason }
}

// PhaseClosedEvent announces that actor closed ph, which holds n messages.
func PhaseClosedEvent(actor Actor, ph *Phase, n int) bus.Event {
	return bus.Event{Kind: bus.EvPhaseClosed, Actor: actor.Name, TaskID: ph.TaskID, PhaseID: ph.ID, Text: string(ph.CloseReason),
		Data: bus.PhaseClosed{Messages: n, Limit: ph.MessageLimit}}
}
