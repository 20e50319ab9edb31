package dashboard

import (
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// RoomView is a room of the snapshot as a conversation: the room, when it
// last moved and who is typing in it, so a room where every agent waits
// does not look like a working one.
type RoomView struct {
	ops.Room
	// LastActivity is when the room last changed (task.RoomLastActivity:
	// opened, a post, an extension, its close); IdleSeconds is how long ago
	// that was when the snapshot was read.
	LastActivity time.Time `json:"last_activity"`
	IdleSeconds  int64     `json:"idle_seconds"`
	// Typing are the room's agents whose turn is in flight: running, with
	// the activity "working" (agent.SetActivity): the llm runtime records it
	// from the moment it reads the room's new messages until its model turn
	// ends; an exec agent's host while its CLI runs and is not blocked in a
	// pm command that waits (pm chat --wait, pm wait, pm call).
	Typing []Typist `json:"typing"`
}

// Typist is an agent whose turn is in flight, and since when.
type Typist struct {
	Name  string     `json:"name"`
	Role  string     `json:"role,omitempty"`
	Since *time.Time `json:"since,omitempty"`
}

// roomView adds a room's liveness to it: its role agents' records are read
// (a few per room), its last activity is its files' times.
func roomView(sess *ops.Session, room ops.Room) RoomView {
	v := RoomView{Room: room, Typing: []Typist{}}
	ph := room.Phase
	v.LastActivity = task.RoomLastActivity(sess.Store, ph)
	v.IdleSeconds = int64(max(sess.Store.Now().Sub(v.LastActivity), 0) / time.Second)
	if ph.Status != store.PhaseActive {
		return v
	}
	for _, name := range ph.Agents {
		if a, err := sess.State.Agent(name); err == nil && typing(a) {
			v.Typing = append(v.Typing, Typist{Name: a.Name, Role: a.Role, Since: a.ActiveAt})
		}
	}
	return v
}

// typing: a's turn is in flight (the page applies the same rule to
// agent.activity events).
func typing(a *store.Agent) bool {
	return a.Status == store.AgentRunning && a.Activity == agent.ActivityWorking
}
