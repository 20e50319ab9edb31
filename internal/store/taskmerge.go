package store

import (
	"path/filepath"
	"strings"

	"github.com/plasmodium/pm/internal/gitx/pin"
)

// This file holds what a task records of its git worktree and merge
// (issue 23), apart from the rest of the model so that it merges alone.

// TaskGit is what a task records of its worktree and merge, embedded in
// Task.
type TaskGit struct {
	// Worktree is the task's own linked work tree and branch (nil: the
	// task works in the project's checkout, as without isolation).
	Worktree *pin.Worktree `json:"worktree,omitempty"`
	// Review holds the task's merge until the human runs pm merge or pm
	// reject (pm task --review, or merge.review "human").
	Review bool `json:"review,omitempty"`
	// Merge is where the task's merge stands while it waits (nil: not
	// tried, or merged).
	Merge *TaskMerge `json:"merge,omitempty"`
	// Merged is the commit its branch was merged as ("" not merged).
	Merged string `json:"merged,omitempty"`
	// Rejected is why the human last sent the work back (pm reject): its
	// owner's prompt says it.
	Rejected string `json:"rejected,omitempty"`
	// Rejections counts the times pm reject sent the work back; an owner
	// whose last start saw fewer has a rejection to act on (Agent.Rejections).
	Rejections int `json:"rejections,omitempty"`
}

// Merge states (TaskMerge.State).
const (
	// MergeConflict: both sides changed the same lines; the task waits
	// (pm done again after resolving, pm merge --ours|--theirs, pm reject).
	MergeConflict = "conflict"
	// MergeDirty: the checkout of the branch merged into has local changes
	// to paths the merge changes; the task waits for the human.
	MergeDirty = "dirty"
	// MergeReview: held for review (pm merge or pm reject).
	MergeReview = "review"
)

// TaskMerge is a merge that waits.
type TaskMerge struct {
	State string   `json:"state"`
	Paths []string `json:"paths,omitempty"` // the conflicting or locally changed paths
	// Onto is the tip of the branch merged into that a conflict was found
	// against: after the conflict is resolved in the worktree, pm done
	// commits with it as a second parent.
	Onto    string `json:"onto,omitempty"`
	Request string `json:"request,omitempty"` // the request that asked for a decision
}

// Held reports whether t is done but its work not merged yet: its
// dependants still wait for it.
func (t *Task) Held() bool { return t.Merge != nil && t.Worktree != nil }

// WorktreesDir is where a project's task worktrees live: in the project
// directory, beside the state directory (docs/spec.md, "Worktrees").
const WorktreesDir = ".pm-worktrees"

// WorktreePath is t's worktree on the machine whose project directory is
// project: the recorded path, or for a task whose code goes through a git
// remote (made on every machine that needs it), this machine's
// project/.pm-worktrees/ID.
func (t *Task) WorktreePath(project string) string {
	if t.Worktree == nil {
		return ""
	}
	if t.Worktree.Remote == "" {
		return t.Worktree.Path
	}
	real, err := filepath.EvalSymlinks(project)
	if err != nil {
		real = project
	}
	return filepath.Join(real, WorktreesDir, t.ID) // derived: the recorded path is another machine's
}

// WorkDir is where t's agents work, given the project directory: the
// project directory's place in t's worktree (for a task whose code goes
// through a remote, the same place as on the machine that made it, in
// this machine's worktree).
func (t *Task) WorkDir(project string) string {
	if t.Worktree == nil || t.Repo == nil {
		return project
	}
	path := t.WorktreePath(project)
	if t.Worktree.Remote != "" {
		// The project's place in the repository is the same in every clone:
		// the recorded worktree is made/.pm-worktrees/ID.
		rel, err := filepath.Rel(t.Repo.WorkTree, filepath.Dir(filepath.Dir(t.Worktree.Path)))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return path
		}
		return filepath.Join(path, rel)
	}
	real, err := filepath.EvalSymlinks(project)
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(t.Repo.WorkTree, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.Join(path, rel)
}

// IntoName is the branch t merges into as the user names it: main, or
// origin/main when it is a git remote's.
func (t *Task) IntoName() string {
	if t.Worktree == nil {
		return ""
	}
	into := strings.TrimPrefix(t.Worktree.Into, "refs/heads/")
	if t.Worktree.Remote != "" {
		return t.Worktree.Remote + "/" + into
	}
	return into
}

// GitMirrorDir is where pm keeps its mirror of the git remote name
// (gitx.Remote: a bare git dir of pm's own, its config written by pm), in
// the state directory, which agents do not reach.
func (s *Store) GitMirrorDir(name string) string { return filepath.Join(s.Root, "git", name+".git") }
