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

// GitConfig is how pm's git reaches other machines (docs/distributed.md,
// "Code through a git remote").
type GitConfig struct {
	// Remote names the git remote a hub project's task branches and merges
	// go through (default "origin"; "none": never, worktrees and merges stay
	// on the machine that made the task).
	Remote string `json:"remote,omitempty"`
}

// DefaultGitRemote is git.remote's default.
const DefaultGitRemote = "origin"

// GitRemote is the git remote's name a hub project's code goes through
// ("" for "none").
func (c Config) GitRemote() string {
	switch c.Git.Remote {
	case "":
		return DefaultGitRemote
	case "none":
		return ""
	}
	return c.Git.Remote
}

// validateGit checks isolation, merge.review and git.remote.
func (c Config) validateGit(path string) error {
	if r := c.Git.Remote; r != "" && !validRemoteName(r) {
		return fmt.Errorf("%s: git.remote is %q; want a git remote's name (letters, digits, '.', '_', '-') or \"none\"", path, r)
	}
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

// validRemoteName: a name git accepts for a remote and no option or path
// trick (no leading dash or dot, no slash).
func validRemoteName(r string) bool {
	if r == "" || len(r) > 100 || r[0] == '-' || r[0] == '.' {
		return false
	}
	for _, c := range r {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
