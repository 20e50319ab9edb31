package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// supervisorWantedPath marks that a supervisor should be running: written
// whenever an agent is started (and by the supervisor itself), removed only
// by a supervisor that found nothing live. A marker without a supervisor
// holding its lock is one that died (kill -9): the next command starts one.
func (s *Store) supervisorWantedPath() string { return filepath.Join(s.Root, "supervisor.wanted") }

// MarkSupervisorWanted records that a supervisor should be running.
func (s *Store) MarkSupervisorWanted() error {
	if s.SupervisorWanted() {
		return nil
	}
	f, err := os.OpenFile(s.supervisorWantedPath(), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// SupervisorWanted reports whether the marker is there (one stat).
func (s *Store) SupervisorWanted() bool {
	_, err := os.Stat(s.supervisorWantedPath())
	return err == nil
}

// ClearSupervisorWanted removes the marker; the supervisor calls it, under
// its lock, when nothing is live any more.
func (s *Store) ClearSupervisorWanted() error {
	if err := os.Remove(s.supervisorWantedPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// SupervisorDown reports that a supervisor is wanted and none holds its
// lock: one died (kill -9) and the next command is to start it again
// (supervisor.Revive). A stat when none is wanted.
func (s *Store) SupervisorDown() bool {
	if !s.SupervisorWanted() {
		return false
	}
	unlock, free, err := s.TryLockSupervisor()
	if err != nil {
		return false
	}
	if free {
		_ = unlock()
	}
	return free
}
