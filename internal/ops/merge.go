package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// DiffInput is pm diff.
type DiffInput struct {
	Task string `json:"task" jsonschema:"task id"`
}

// DiffResult is a task's committed changes against where its branch
// started (its merge base with the branch it merges into).
type DiffResult struct {
	Task   string          `json:"task"`
	Branch string          `json:"branch"`
	Into   string          `json:"into"`
	Base   string          `json:"base"`
	Files  []gitx.FileDiff `json:"files"`
	// Uncommitted: the task is still working, so Files include what its
	// agents changed in its worktree and pm done has not committed yet
	// (what pm done would commit now).
	Uncommitted bool `json:"uncommitted,omitempty"`
}

// TaskDiff is pm diff: what a task's branch changed.
func TaskDiff(ctx context.Context, sess *Session, in DiffInput) (DiffResult, error) {
	t, err := sess.State.Task(in.Task)
	if err != nil {
		return DiffResult{}, err
	}
	if t.Worktree == nil || t.Repo == nil {
		return DiffResult{}, errs.Statef("a task has a branch of its own when the project is a git repository and isolation is not \"none\"", "task %s has no branch of its own", t.ID)
	}
	base, files, working, err := task.Diff(sess.Store, t)
	if err != nil {
		return DiffResult{}, errs.Failf("fix the repository (git status)", "diff %s: %v", t.ID, err)
	}
	return DiffResult{Task: t.ID, Branch: t.Worktree.Branch, Into: t.Worktree.Into, Base: base, Files: files, Uncommitted: working}, nil
}

// MergeInput is pm merge.
type MergeInput struct {
	Task   string `json:"task" jsonschema:"task id"`
	Theirs bool   `json:"theirs,omitempty" jsonschema:"conflicts: the task's version"`
	Ours   bool   `json:"ours,omitempty" jsonschema:"conflicts: the branch's version"`
}

// MergeTask is pm merge: the human (or a subtask's parent owner) merges a
// task whose merge waits.
func MergeTask(ctx context.Context, sess *Session, in MergeInput) (*task.MergeResult, error) {
	favor := gitx.FavorNone
	switch {
	case in.Theirs && in.Ours:
		return nil, errs.Usagef("pm merge "+in.Task+" --theirs, or --ours", "--theirs and --ours together")
	case in.Theirs:
		favor = gitx.FavorTheirs
	case in.Ours:
		favor = gitx.FavorOurs
	}
	l, err := sess.launcher()
	if err != nil {
		return nil, err
	}
	return task.Merge(sess.Store, l, sess.Actor, in.Task, favor)
}

// RejectInput is pm reject.
type RejectInput struct {
	Task string `json:"task" jsonschema:"task id"`
	Why  string `json:"why" jsonschema:"why; its owner works on"`
}

// RejectTask is pm reject: the task's work goes back to its owner.
func RejectTask(ctx context.Context, sess *Session, in RejectInput) (*store.Task, error) {
	l, err := sess.launcher()
	if err != nil {
		return nil, err
	}
	return task.Reject(sess.Store, l, sess.Actor, in.Task, in.Why)
}
