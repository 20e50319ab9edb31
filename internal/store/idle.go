package store

import (
	"os"
	"time"
)

// AgentTouched is when the agent's files last changed: its log (its host's
// lines, an exec agent's output), its transcript (an llm agent's turns),
// its streamed replies and what it read of its room (seen). The zero time
// when none exists. A stat each: no file is read.
func (s *Store) AgentTouched(name string) time.Time {
	return latestMtime(s.LogPath(name), s.TranscriptPath(name), s.StreamPath(name), s.seenPath(name))
}

// RoomTouched is when the room's log or record last changed (a post, an
// extend-phase, its close).
func (s *Store) RoomTouched(taskID, phaseID string) time.Time {
	return latestMtime(s.MessagesPath(taskID, phaseID), s.PhasePath(taskID, phaseID))
}

func latestMtime(paths ...string) time.Time {
	var t time.Time
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t
}
