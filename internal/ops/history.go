package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// HistoryInput is pm history.
type HistoryInput struct {
	Task string `json:"task,omitempty" jsonschema:"tk-...; default: yours"`
	// Tail is a pointer so 0 (show nothing) differs from unset (DefaultTail).
	Tail *int `json:"tail,omitempty" jsonschema:"the newest N messages (default 20)"`
}

// DefaultTail is how many messages history shows when not told.
const DefaultTail = 20

// HistoryResult is the last messages of a task's phases, oldest first.
type HistoryResult struct {
	Task    *store.Task   `json:"task"`
	Entries []phase.Entry `json:"entries"`
}

// History reads the last Tail messages of all the phases of a task.
func History(ctx context.Context, sess *Session, in HistoryInput) (HistoryResult, error) {
	t, err := ResolveTask(sess.Store, sess.State, sess.Actor, in.Task)
	if err != nil {
		return HistoryResult{}, err
	}
	tail := DefaultTail
	if in.Tail != nil {
		tail = *in.Tail
	}
	entries, err := phase.History(sess.Store, sess.State, t.ID, tail)
	if err != nil {
		return HistoryResult{}, err
	}
	return HistoryResult{Task: t, Entries: entries}, nil
}
