package config

import (
	"fmt"
	"time"
)

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
	// RemoteTimeout bounds each git run against the remote that only
	// tidies up, which a command goes on without: the fetch and the
	// branch deletions of pm kill and pm reset, and the deletions of
	// killed and merged tasks' branches any command makes ("20s" by
	// default; from 1s to 10m). The fetch and pushes that move work (pm
	// task, done, merge, diff) keep git's own 2 minutes.
	RemoteTimeout string `json:"remote_timeout,omitempty"`
}

// DefaultGitRemoteTimeout is git.remote_timeout's default.
const DefaultGitRemoteTimeout = 20 * time.Second

// git.remote_timeout's bounds: a remote needs a second to answer at all,
// and a kill must not wait longer than a fetch of work does.
const (
	minGitRemoteTimeout = time.Second
	maxGitRemoteTimeout = 10 * time.Minute
)

// GitRemoteTimeout is git.remote_timeout as a duration.
func (c Config) GitRemoteTimeout() time.Duration {
	return durationOr(c.Git.RemoteTimeout, DefaultGitRemoteTimeout)
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

// validateGit checks isolation, merge.review, git.remote and
// git.remote_timeout.
func (c Config) validateGit(path string) error {
	if r := c.Git.Remote; r != "" && !validRemoteName(r) {
		return fmt.Errorf("%s: git.remote is %q; want a git remote's name (letters, digits, '.', '_', '-') or \"none\"", path, r)
	}
	if t := c.Git.RemoteTimeout; t != "" {
		if d, err := time.ParseDuration(t); err != nil || d < minGitRemoteTimeout || d > maxGitRemoteTimeout {
			return fmt.Errorf("%s: git.remote_timeout is %q; want a duration from 1s to 10m, such as \"20s\"", path, t)
		}
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
