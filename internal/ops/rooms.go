package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/store"
)

// RoomsInput asks for the phases of the live tasks (the dashboard's rooms).
type RoomsInput struct {
	// Tail is how many of each active phase's last messages to include
	// (0: none; closed phases never carry messages here).
	Tail int `json:"tail,omitempty"`
}

// Room is one phase with its message count against its limit and, for an
// active phase, its last messages.
type Room struct {
	Phase    *store.Phase    `json:"phase"`
	Count    int             `json:"count"`
	Messages []store.Message `json:"messages,omitempty"`
}

// Rooms lists every phase of every live task, oldest first. Unlike Chat it
// is a pure read: nothing is marked seen.
func Rooms(ctx context.Context, sess *Session, in RoomsInput) ([]Room, error) {
	tasks, err := sess.Store.Tasks()
	if err != nil {
		return nil, err
	}
	rooms := []Room{}
	for _, t := range tasks {
		if !t.Live() {
			continue
		}
		phases, err := sess.Store.Phases(t.ID)
		if err != nil {
			return nil, err
		}
		for _, ph := range phases {
			room, err := readRoom(sess.Store, ph, in.Tail)
			if err != nil {
				return nil, err
			}
			rooms = append(rooms, room)
		}
	}
	return rooms, nil
}

func readRoom(s *store.Store, ph *store.Phase, tail int) (Room, error) {
	if ph.Status != store.PhaseActive || tail <= 0 {
		n, err := s.MessageCount(ph.TaskID, ph.ID)
		return Room{Phase: ph, Count: n}, err
	}
	msgs, err := s.Messages(ph.TaskID, ph.ID)
	if err != nil {
		return Room{}, err
	}
	n := len(msgs)
	if len(msgs) > tail {
		msgs = msgs[len(msgs)-tail:]
	}
	return Room{Phase: ph, Count: n, Messages: msgs}, nil
}
