package config

import "fmt"

// Isolation values (config isolation).
const (
	IsolationWorktree = "worktree" // the default: a git worktree per task
	IsolationNone     = "none"     // every task works in the project's checkout
)

// MergeConfig is how a task's work is merged.
type MergeConfig struct {
	// Review "human" holds every top-level task's merge until pm merge or
	// pm reject; "" or "none" merges at pm done.
	Review string `json:"review,omitempty"`
}

// validateGit checks isolation and merge.review.
func (c Config) validateGit(path string) error {
	switch c.Isolation {
	case "", IsolationWorktree, IsolationNone:
	default:
		return fmt.Errorf("%s: isolation is %q; want \"worktree\" or \"none\"", path, c.Isolation)
	}
	switch c.Merge.Review {
	case "", "none", "human":
	default:
		return fmt.Errorf("%s: merge.review is %q; want \"human\" or \"none\"", path, c.Merge.Review)
	}
	return nil
}
