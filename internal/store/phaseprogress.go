package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/plasmodium/pm/internal/jsonl"
)

// PhaseProgress is one line of tasks/ID/progress.jsonl: a phase an agent
// opened, with the task's progress mark then (the loop breaker's phases
// check, internal/ops) and whether the human let it past the breaker.
type PhaseProgress struct {
	Phase   string `json:"phase"`
	Mark    string `json:"mark"`
	Allowed bool   `json:"allowed,omitempty"`
}

// PhaseProgressPath is tasks/ID/progress.jsonl.
func (s *Store) PhaseProgressPath(taskID string) string {
	return filepath.Join(s.TaskDir(taskID), "progress.jsonl")
}

// PhasesProgress reads a task's phase progress lines, oldest first (none
// when there is no file).
func (s *Store) PhasesProgress(taskID string) ([]PhaseProgress, error) {
	out, err := jsonl.ReadAll[PhaseProgress](s.PhaseProgressPath(taskID), s.BadLine)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// AppendPhaseProgress records p, unless the last line is p's phase already
// (the same pm phase run again after a kill found its room).
func (s *Store) AppendPhaseProgress(taskID string, p PhaseProgress) error {
	path := s.PhaseProgressPath(taskID)
	if s.OnHub() {
		// The task's records are on the hub, its directory not made here:
		// each machine keeps the progress of the phases opened from it,
		// as the mark is of this machine's files (docs/distributed.md).
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
	}
	if last, _, _ := jsonl.LastRecords[PhaseProgress](path, 1, nil, nil); len(last) == 1 && last[0].Phase == p.Phase {
		return nil
	}
	return jsonl.Append(path, p)
}
