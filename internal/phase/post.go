package phase

import (
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Post is pm say: the phase phaseID names (Resolve: "" is the actor's own
// room, or the only active one), checked for the actor (CheckPost), gets
// content (SayFenced, carried by fence: the lease of the host whose
// agent's call this is, nil for none). closed reports that this message
// closed it.
func Post(s *store.Store, st state.State, actor store.Actor, fence state.AgentLease, phaseID, content string) (ph *store.Phase, msg store.Message, closed bool, err error) {
	ph, err = Resolve(s, st, actor, phaseID)
	if err != nil {
		return nil, msg, false, err
	}
	if err := CheckPost(actor, ph); err != nil {
		return nil, msg, false, err
	}
	msg, closed, err = SayFenced(s, st, actor, fence, ph.TaskID, ph.ID, content)
	return ph, msg, closed, err
}

// Read is pm chat without a wait: each message of the room phaseID names
// (Resolve) goes to each as it is read (state.Phases.ReadRoom), decoded
// once, nothing held; then the messages are marked seen for the actor. n
// is how many there were.
func Read(s *store.Store, st state.State, actor store.Actor, phaseID string, each func(raw []byte, m *store.Message) error) (ph *store.Phase, n int, err error) {
	return readRoom(s, st, actor, phaseID, func(ph *store.Phase, n *int) error {
		_, err := st.ReadRoom(ph.TaskID, ph.ID, 0, nil, func(raw []byte) error {
			m, err := store.DecodeMessage(raw)
			if err != nil || m.ID == "" {
				return nil // valid JSON that is no message: not one of the room's
			}
			*n++
			return each(raw, &m)
		})
		return err
	})
}

// ReadViews is Read for a reader that uses each message at once and keeps
// nothing (pm chat): the messages go to each through v, decoded without
// copying (state.MessageView), or with v nil only checked to be JSON (pm
// chat --json prints them as written). raw and v are valid only until
// each returns. n and the seen mark are Read's.
func ReadViews(s *store.Store, st state.State, actor store.Actor, phaseID string, v *store.MessageView, each func(raw []byte) error) (ph *store.Phase, n int, err error) {
	return readRoom(s, st, actor, phaseID, func(ph *store.Phase, n *int) error {
		_, err := st.ReadRoom(ph.TaskID, ph.ID, 0, v, func(raw []byte) error {
			*n++
			return each(raw)
		})
		return err
	})
}

// readRoom resolves phaseID, reads its room (read counts the lines it hands
// on in *n) and marks them seen for the actor.
func readRoom(s *store.Store, st state.State, actor store.Actor, phaseID string, read func(ph *store.Phase, n *int) error) (ph *store.Phase, n int, err error) {
	if ph, err = Resolve(s, st, actor, phaseID); err != nil {
		return nil, 0, err
	}
	if err := read(ph, &n); err != nil {
		return ph, n, err
	}
	MarkSeen(s, st, actor, ph, n)
	return ph, n, nil
}
