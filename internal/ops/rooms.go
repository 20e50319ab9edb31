package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// RoomsInput asks for the phases of the live tasks (the dashboard's rooms),
// or of one task, live or finished (its detail view).
type RoomsInput struct {
	// Tail is how many of each active phase's last messages to include
	// (0: none; closed phases carry messages only when Task is set).
	Tail int `json:"tail,omitempty"`
	// Task, when set, lists that task's phases only, closed ones with their
	// messages too.
	Task string `json:"task,omitempty"`
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
	if in.Task != "" {
		return taskRooms(sess.Store, sess.State, in.Task, in.Tail)
	}
	tasks, err := sess.State.Tasks()
	if err != nil {
		return nil, err
	}
	return LiveRooms(ctx, sess, tasks, in.Tail)
}

// LiveRooms is Rooms over tasks read already (the dashboard's snapshot has
// them): the phases of the live ones, only active phases' last tail
// messages read; a closed phase is counted, its messages left unread.
func LiveRooms(_ context.Context, sess *Session, tasks []*store.Task, tail int) ([]Room, error) {
	rooms := []Room{}
	for _, t := range tasks {
		if !t.Live() {
			continue
		}
		phases, err := sess.State.Phases(t.ID)
		if err != nil {
			return nil, err
		}
		for _, ph := range phases {
			room, err := readRoom(sess.Store, sess.State, ph, tail, false)
			if err != nil {
				return nil, err
			}
			rooms = append(rooms, room)
		}
	}
	return rooms, nil
}

// taskRooms is every phase of one task, each with its last tail messages.
func taskRooms(s *store.Store, st state.State, id string, tail int) ([]Room, error) {
	t, err := st.Task(id)
	if err != nil {
		return nil, err
	}
	phases, err := st.Phases(t.ID)
	if err != nil {
		return nil, err
	}
	rooms := []Room{}
	for _, ph := range phases {
		room, err := readRoom(s, st, ph, tail, true)
		if err != nil {
			return nil, err
		}
		rooms = append(rooms, room)
	}
	return rooms, nil
}

func readRoom(s *store.Store, st state.State, ph *store.Phase, tail int, closedToo bool) (Room, error) {
	if (ph.Status != store.PhaseActive && !closedToo) || tail <= 0 {
		n, err := st.MessageCount(ph.TaskID, ph.ID)
		return Room{Phase: ph, Count: n}, err
	}
	msgs, n, err := st.LastMessages(ph.TaskID, ph.ID, tail)
	if err != nil {
		return Room{}, err
	}
	return Room{Phase: ph, Count: n, Messages: msgs}, nil
}
