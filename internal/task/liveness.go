package task

import (
	"fmt"
	"time"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Liveness: when a task, room or agent last did something, derived from the
// records' times and the files' modification times (store.AgentTouched,
// RoomTouched), never stored. A room where agents wait on each other looks
// like a working one by its records alone; its last activity does not.

// AgentLastActivity is when agent a last did something: started, ended,
// wrote its log or transcript, streamed, read its room.
func AgentLastActivity(s *store.Store, a *store.Agent) time.Time {
	last := latest(a.CreatedAt, s.AgentTouched(a.Name))
	if a.StartedAt != nil {
		last = latest(last, *a.StartedAt)
	}
	if a.EndedAt != nil {
		last = latest(last, *a.EndedAt)
	}
	return last
}

// RoomLastActivity is when room p last changed: opened, a post, an
// extension, its close.
func RoomLastActivity(s *store.Store, p *store.Phase) time.Time {
	last := latest(p.CreatedAt, s.RoomTouched(p.TaskID, p.ID))
	if p.ClosedAt != nil {
		last = latest(last, *p.ClosedAt)
	}
	return last
}

// TaskLastActivity is when task t last moved: its creation, its open room,
// its owner and the room's agents (p may be nil: no open room).
func TaskLastActivity(s *store.Store, st state.State, t *store.Task, p *store.Phase) time.Time {
	last := t.CreatedAt
	names := []string{t.Owner}
	if p != nil {
		last = latest(last, RoomLastActivity(s, p))
		names = append(names, p.Agents...)
	}
	for _, n := range names {
		if a, err := st.Agent(n); err == nil {
			last = latest(last, AgentLastActivity(s, a))
		}
	}
	return last
}

// idleHealth turns a working task whose room nobody has moved for the
// configured time (runtime.idle_after) into idle, and three times that
// into stuck, with what to look at and do. It also records the task's last
// activity and idle time on h for every view.
func idleHealth(s *store.Store, st state.State, t *store.Task, p *store.Phase, h *Health) {
	last := TaskLastActivity(s, st, t, p)
	idle := max(s.Now().Sub(last), 0)
	h.LastActivity, h.IdleSeconds = &last, int64(idle/time.Second)
	after := s.Config().Runtime.IdleAfterDuration()
	if after <= 0 || idle < after || h.State != StateWorking || p == nil {
		return // an owner at work outside a room is judged by its own budgets
	}
	h.State = StateIdle
	if idle >= 3*after {
		h.State = StateStuck
	}
	h.Reason = fmt.Sprintf("nothing posted, read or said for %s in room %s %q (%d/%d): its agents may be waiting on each other",
		Ago(idle), p.ID, p.Name, h.Phase.Messages, h.Phase.Limit)
	h.Next = fmt.Sprintf("pm chat --phase %s to look; then pm extend-phase N --task %s or pm end-phase --task %s to move it on, or pm kill %s --restart",
		p.ID, t.ID, t.ID, t.ID)
}

// Ago is a duration as a person reads it: 45s, 12m, 3h5m, 2d4h.
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
