package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmodium/pm/internal/ids"
)

// The phase index (phase-index/ph-ID, holding the task's id) lets a human's
// `pm say --phase ph-..` find the phase without visiting every task: constant
// in the number of tasks. The task directories are the truth and the index
// only a cache of them: a phase never changes task, so an entry once right
// stays right; an entry missing, unreadable or naming a task that does not
// hold the phase is ignored, the tasks are scanned as before and the entry is
// rewritten. Entries are written by CreatePhase after phase.json and by
// FindPhase's repair, best effort: a failed write only means a scan next time.

// PhaseIndexPath is the index entry of a phase.
func (s *Store) PhaseIndexPath(phaseID string) string {
	return filepath.Join(s.phaseIndexDir(), phaseID)
}

// phaseIndexDir holds the phase index's entries.
func (s *Store) phaseIndexDir() string { return filepath.Join(s.Root, "phase-index") }

// indexedTask returns the task the index names for phaseID, if that task
// holds the phase; "" otherwise.
func (s *Store) indexedTask(phaseID string) string {
	data, err := os.ReadFile(s.PhaseIndexPath(phaseID))
	if err != nil {
		return ""
	}
	taskID := strings.TrimSpace(string(data))
	if ids.Parse(ids.Task, taskID) != nil {
		return ""
	}
	if _, err := os.Stat(s.PhasePath(taskID, phaseID)); err != nil {
		return ""
	}
	return taskID
}

// indexPhase records that phaseID belongs to taskID (best effort). The entry
// is written whole by a rename, so a reader never sees half of it.
func (s *Store) indexPhase(taskID, phaseID string) {
	p := s.PhaseIndexPath(phaseID)
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(p), phaseID+".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.WriteString(taskID + "\n")
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), p) != nil {
		os.Remove(f.Name())
		return
	}
	// A pm reset may have removed the task since it was found (it removes
	// the tasks, then the index): an entry written after the index went
	// would name a task that is gone, so it goes again.
	if _, err := os.Stat(s.PhasePath(taskID, phaseID)); errors.Is(err, os.ErrNotExist) {
		os.Remove(p)
	}
}
