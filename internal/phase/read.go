package phase

import (
	"context"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Seen is how many messages of phaseID the actor has been shown (0 for the
// human, who has no record).
func Seen(s *store.Store, st state.State, actor store.Actor, phaseID string) int {
	if actor.IsHuman() {
		return 0
	}
	return st.Seen(actor.Name, phaseID)
}

// MarkSeen records that the actor has been shown the first n messages of ph.
func MarkSeen(s *store.Store, st state.State, actor store.Actor, ph *store.Phase, n int) {
	if !actor.IsHuman() {
		st.MarkSeen(actor.Name, ph.ID, n)
	}
}

// Waited is what WaitNew found.
type Waited struct {
	Fresh [][]byte // raw JSON lines of the messages not shown to the actor before
	Count int      // messages in the phase when the wait ended
	// Closed: the phase closed before anyone else posted (Phase is its
	// final record).
	Closed bool
	Phase  *store.Phase
}

// Messages decodes Fresh, skipping lines that do not decode.
func (w *Waited) Messages() []store.Message {
	out := make([]store.Message, 0, len(w.Fresh))
	for _, raw := range w.Fresh {
		if m, err := store.DecodeMessage(raw); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// WaitNew blocks until ph holds a message from someone other than the actor
// that the actor has not been shown, or the phase closes; it marks every
// message seen. (pm chat --wait, and the chat tool's wait.) The human has no
// record, so for it "unseen" starts now. When the phase closed with nothing
// new from others the result comes with an exit-5 error.
func WaitNew(ctx context.Context, s *store.Store, st state.State, actor store.Actor, ph *store.Phase) (*Waited, error) {
	from := Seen(s, st, actor, ph.ID)
	if actor.IsHuman() {
		n, err := st.MessageCount(ph.TaskID, ph.ID)
		if err != nil {
			return nil, err
		}
		from = n
	}
	w := &Waited{Phase: ph}
	others := false // a fresh message is someone else's: each decoded once, as it comes
	collect := func(raw []byte) error {
		w.Fresh = append(w.Fresh, raw)
		if m, err := store.DecodeMessage(raw); err == nil && m.Author != actor.Name {
			others = true
		}
		return nil
	}
	ready := func() (bool, error) {
		if others {
			return true, nil
		}
		p, err := st.Phase(ph.TaskID, ph.ID)
		if err != nil {
			return false, err
		}
		if p.Status != store.PhaseActive {
			w.Phase, w.Closed = p, true
			return true, nil
		}
		return false, nil
	}
	// The room is followed from the first message the actor has not been
	// shown: a position is a message's index on every backend.
	n, err := st.FollowRoom(ctx, ph.TaskID, ph.ID, from, ready, collect)
	if err != nil {
		return nil, err
	}
	w.Count = n
	MarkSeen(s, st, actor, ph, w.Count)
	if w.Closed && !others {
		return w, errs.Statef("leave the room: your part in this phase is over", "phase %s is closed (%s)", w.Phase.ID, w.Phase.CloseReason)
	}
	w.Closed = false
	return w, nil
}

// Entry is one message of a task's history with its phase.
type Entry struct {
	Phase   *store.Phase
	Message store.Message
}

// History returns the last tail messages of all of the task's phases, oldest
// phase first (tail < 0: all of them).
func History(s *store.Store, st state.State, taskID string, tail int) ([]Entry, error) {
	phases, err := st.Phases(taskID)
	if err != nil {
		return nil, err
	}
	var all []Entry
	for _, p := range phases {
		msgs, err := st.Messages(taskID, p.ID)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			all = append(all, Entry{p, m})
		}
	}
	if tail >= 0 && len(all) > tail {
		all = all[len(all)-tail:]
	}
	return all, nil
}
