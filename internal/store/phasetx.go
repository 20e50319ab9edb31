package store

import (
	"os"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// PhaseTx is one critical section of a phase: its messages lock is held, and
// Phase is the record as read under it. Everything that reads a phase's
// status or count and then writes (say, close, extend) runs in one, so the
// room holds exactly message_limit messages however many writers race.
type PhaseTx struct {
	s     *Store
	Phase *Phase
	count int // -1 until counted
}

// WithPhase runs fn in the phase's critical section (messages.jsonl's lock),
// with the record as derived there (settleHeld).
// An unknown or malformed id is refused (exit 4 / exit 2) before any lock
// file is made.
func (s *Store) WithPhase(taskID, phaseID string, fn func(tx *PhaseTx) error) error {
	// The phase must exist before its lock file is made; it is read under
	// the lock. A stat settles the common case; anything else gets Phase's
	// own error (bad id, missing, unreadable).
	if ids.Parse(ids.Task, taskID) != nil || ids.Parse(ids.Phase, phaseID) != nil || !isFile(s.PhasePath(taskID, phaseID)) {
		if _, err := s.readPhase(taskID, phaseID); err != nil {
			return err
		}
	}
	return lockedfile.With(s.MessagesPath(taskID, phaseID), func() error {
		ph, err := s.readPhase(taskID, phaseID)
		if err != nil {
			return err
		}
		tx := &PhaseTx{s: s, Phase: ph, count: -1}
		// fn sees the room as it is (RoomClosedBy): a close a crash left
		// undone is written first.
		if err := tx.settleHeld(); err != nil {
			return err
		}
		return fn(tx)
	})
}

// Count is how many messages the phase holds (see MessageCount), counted
// from the phase's count mark (countmark.go): constant in the room's size.
func (tx *PhaseTx) Count() (int, error) {
	if tx.count < 0 {
		n, err := tx.s.countHeld(tx.Phase.TaskID, tx.Phase.ID)
		if err != nil {
			return 0, err
		}
		tx.count = n
	}
	return tx.count, nil
}

// Append adds m to the phase's messages as one whole line.
func (tx *PhaseTx) Append(m Message) error {
	if err := jsonl.AppendHeld(tx.s.MessagesPath(tx.Phase.TaskID, tx.Phase.ID), m); err != nil {
		return err
	}
	if tx.count >= 0 {
		tx.count++
	}
	return nil
}

// Update rewrites phase.json with fn applied, and Phase with it.
func (tx *PhaseTx) Update(fn func(p *Phase)) error {
	out, err := tx.s.updatePhase(tx.Phase.TaskID, tx.Phase.ID, fn)
	if err != nil {
		return err
	}
	tx.Phase = out
	return nil
}

// UpdatePhase rewrites phase.json under its own lock, for fields no critical
// section reads (the role agents started for it).
func (s *Store) UpdatePhase(taskID, phaseID string, fn func(p *Phase)) (*Phase, error) {
	if _, err := s.readPhase(taskID, phaseID); err != nil {
		return nil, err
	}
	return s.updatePhase(taskID, phaseID, fn)
}

func (s *Store) updatePhase(taskID, phaseID string, fn func(p *Phase)) (*Phase, error) {
	out, err := lockedfile.Update(s.PhasePath(taskID, phaseID), false, func(p *Phase) error {
		fn(p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreatePhase opens a phase under the task's phases lock, so two owners (or a
// retried command) cannot open two active phases: build sees the task and its
// phases as they are under the lock, with a fresh id, and returns the record
// to write (or an error, and nothing is written). The store makes the phase's
// directory, an empty messages.jsonl, then phase.json.
func (s *Store) CreatePhase(taskID string, build func(t *Task, existing []*Phase, id string) (*Phase, error)) (*Phase, error) {
	return s.CreatePhaseThen(taskID, build, nil)
}

// CreatePhaseThen is CreatePhase with then run under the same phases lock
// once phase.json is written (pm phase records its role agents there): no
// one who takes that lock (EnsureRoles' repair) sees the phase before then
// ran, unless the process died in between.
func (s *Store) CreatePhaseThen(taskID string, build func(t *Task, existing []*Phase, id string) (*Phase, error), then func(ph *Phase) error) (*Phase, error) {
	// The lock lives in the task's directory: look the task up first so an
	// unknown id is exit 4, not a failure to create the lock file.
	if _, err := s.Task(taskID); err != nil {
		return nil, err
	}
	var ph *Phase
	err := lockedfile.With(s.PhasesDir(taskID), func() error {
		t, err := s.Task(taskID)
		if err != nil {
			return err
		}
		existing, err := s.Phases(taskID)
		if err != nil {
			return err
		}
		id, err := s.freshPhaseID(taskID)
		if err != nil {
			return err
		}
		if ph, err = build(t, existing, id); err != nil {
			return err
		}
		crashpoint.Hit("phase.built")
		if err := os.MkdirAll(s.PhaseDir(taskID, id), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(s.MessagesPath(taskID, id), nil, 0o644); err != nil {
			return err
		}
		p := s.PhasePath(taskID, id)
		if err := lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, ph) }); err != nil {
			return err
		}
		s.indexPhase(taskID, id)
		if then != nil {
			return then(ph)
		}
		return nil
	})
	if err != nil {
		return ph, err
	}
	return ph, nil
}

func (s *Store) freshPhaseID(taskID string) (string, error) {
	for range 16 {
		id := s.IDs.New(ids.Phase)
		if _, err := os.Stat(s.PhaseDir(taskID, id)); os.IsNotExist(err) {
			return id, nil
		}
	}
	return "", errs.Failf("", "could not find a free phase id")
}

// FollowMessages follows a phase's messages.jsonl from its start until until
// reports true (see bus.Follower).
func (s *Store) FollowMessages(taskID, phaseID string, until func() (bool, error)) *bus.Follower {
	return &bus.Follower{Path: s.MessagesPath(taskID, phaseID), Bad: s.BadLine, Until: until, Keep: isMessage}
}

// isFile reports whether path names a regular file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
