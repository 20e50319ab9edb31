package store

import (
	"path/filepath"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// seen is agents/NAME/seen.json: how many message lines of each phase the
// agent has been shown, so a wait reports only what is new to it.
type seen map[string]int

func (s *Store) seenPath(agent string) string {
	return filepath.Join(s.AgentDir(agent), "seen.json")
}

// Seen is how many message lines of phaseID the agent has been shown.
func (s *Store) Seen(agent, phaseID string) int {
	out := seen{}
	_ = lockedfile.ReadJSON(s.seenPath(agent), &out)
	return out[phaseID]
}

// MarkSeen records that the agent has been shown the first n message lines
// of phaseID; the mark never moves back. It is best effort: a failed write
// shows the agent a message twice, never loses one. A mark that would not
// move is not written (re-reading a room costs no rewrite): since it only
// moves forward, a read without the lock that finds it at n or past is final.
func (s *Store) MarkSeen(agent, phaseID string, n int) {
	if s.Seen(agent, phaseID) >= n {
		return
	}
	_, _ = lockedfile.Update(s.seenPath(agent), true, func(v *seen) error {
		if *v == nil {
			*v = seen{}
		}
		if n <= (*v)[phaseID] {
			return lockedfile.ErrUnchanged
		}
		(*v)[phaseID] = n
		return nil
	})
}
