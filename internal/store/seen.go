package store

import (
	"maps"
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

// DecodeFast decodes seen.json (lockedfile.FastDecoder) without
// encoding/json: pm chat reads it in every run, and encoding/json's map
// decoder cost a short command ~40 µs to set up. It handles what WriteJSON
// writes, an object of string keys (decoded as the records' strings:
// stringInto) and integers, into an empty map, with encoding/json's result (a repeated key: the last
// wins); it reports false, leaving v alone, for anything else.
func (v *seen) DecodeFast(raw []byte) bool {
	if len(*v) != 0 {
		return false // encoding/json would merge into what is there
	}
	out := seen{}
	var doc string // the keys are cut from one copy of raw
	i, end, ok := objectStart(raw, skipSpace(raw, 0))
	for ok && !end {
		var key string
		var n int
		if i, ok = stringInto(raw, i, &doc, &key); !ok {
			return false
		}
		if i, ok = memberValue(raw, i); !ok {
			return false
		}
		if i, ok = intInto(raw, i, &n); !ok {
			return false
		}
		out[key] = n // a repeated key: the last wins, as in encoding/json
		i, end, ok = memberEnd(raw, i)
	}
	if !wholeDocument(raw, i, ok) {
		return false
	}
	if *v == nil {
		*v = out
	} else {
		maps.Copy(*v, out)
	}
	return true
}
