package gitx

import "github.com/go-git/go-git/v5/plumbing/format/gitignore"

// Options tune CommitWith.
type Options struct {
	// Exclude lists gitignore-style patterns (e.g. ".env*", "*.pem",
	// "id_*") of untracked files never to add, because they look like
	// secrets: they are left out of the commit and listed in
	// Result.Excluded, so the caller can name them. Tracked files are
	// committed as before: excluding is about what an agent leaves behind.
	Exclude []string
	// Merging is a commit (hex) the work tree has merged in (a conflict
	// resolved in a task's worktree): the commit gets it as its second
	// parent, and is made even when the tree equals HEAD's.
	Merging string
	// TreeOnly stages the work tree and writes the tree a commit would
	// have, and commits nothing: Result.Tree names it (Committed lists
	// what it changes against HEAD); the index, refs and HEAD are left
	// as they are and no lock is taken (WorkDiff: a task's uncommitted
	// work, while its agents may run git there).
	TreeOnly bool
}

func parseExclude(patterns []string) []gitignore.Pattern {
	ps := make([]gitignore.Pattern, 0, len(patterns))
	for _, p := range patterns {
		if p != "" {
			ps = append(ps, gitignore.ParsePattern(p, nil))
		}
	}
	return ps
}
