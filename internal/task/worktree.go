package task

import (
	"errors"
	"path/filepath"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/store"
)

// WorktreesDir is where a project's task worktrees live: in the project
// directory, beside the state directory (docs/spec.md, "Worktrees").
const WorktreesDir = ".pm-worktrees"

// worktreePlan is the worktree a new task gets, all but its path (which
// needs the task's id): none without a repository, with isolation "none",
// or under a parent that has none; a subtask's starts from its parent's
// branch, a top-level task's from the branch HEAD names now.
func worktreePlan(s *store.Store, repo *gitx.Pin, parentID string) (*gitx.Worktree, error) {
	if repo == nil || repo.WorkTree == "" || s.Config().Isolation == store.IsolationNone {
		return nil, nil
	}
	into := ""
	if parentID != "" {
		p, err := s.Task(parentID)
		if err != nil {
			return nil, err
		}
		if p.Worktree == nil {
			return nil, nil // the parent works in the checkout: so does its subtask
		}
		into = p.Worktree.Branch
	}
	branch, tip, err := gitx.StartPoint(*repo, into)
	if errors.Is(err, gitx.ErrDetached) {
		return nil, errs.Statef("check out a branch (git switch -c work), or run 'pm config set isolation none' to work in the checkout", "no branch to merge the task into: %v", err)
	}
	if err != nil {
		return nil, errs.Failf("fix the repository (git status), then create the task again", "worktree: %v", err)
	}
	return &gitx.Worktree{Base: tip, Into: branch}, nil
}

// worktreeFor fills plan's path and branch for task id.
func worktreeFor(s *store.Store, plan *gitx.Worktree, id string) *gitx.Worktree {
	if plan == nil {
		return nil
	}
	w := *plan
	w.Path = filepath.Join(realPath(s.ProjectDir()), WorktreesDir, id)
	w.Branch = gitx.BranchPrefix + id
	return &w
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// ensureWorktree makes t's worktree if it is missing or half-made (a
// crash between the record and the checkout); a whole one is left alone.
func ensureWorktree(t *store.Task) error {
	if t.Worktree == nil || t.Repo == nil || !t.Live() {
		return nil
	}
	if err := gitx.AddWorktree(*t.Repo, *t.Worktree); err != nil {
		return errs.Failf("fix the repository (git status), then run 'pm status' to make it again", "worktree of %s: %v", t.ID, err)
	}
	return nil
}

// dropWorktree removes t's worktree and, when its work was merged or
// there is none, its branch (a killed task's branch is kept when it has
// commits of its own: nothing committed is lost).
func dropWorktree(s *store.Store, t *store.Task) {
	if t.Worktree == nil || t.Repo == nil {
		return
	}
	keep := t.Status == store.TaskKilled && branchHasWork(t)
	if err := gitx.RemoveWorktree(*t.Repo, *t.Worktree, keep); err != nil {
		s.Warnf("remove the worktree of %s: %v", t.ID, err)
	}
}

// branchHasWork reports whether t's branch moved past its start point.
func branchHasWork(t *store.Task) bool {
	_, tip, err := gitx.StartPoint(*t.Repo, t.Worktree.Branch)
	return err != nil || tip != "" && tip != t.Worktree.Base
}

// wantsWorktree reports whether t still needs its worktree: it is live, or
// done with its merge waiting.
func wantsWorktree(t *store.Task) bool {
	return t.Worktree != nil && (t.Live() || t.Status == store.TaskDone && t.Held())
}

// PruneWorktrees removes the worktrees no task wants any more (a task
// killed, reset or done while pm was killed before it removed its
// worktree), with the branches of the tasks it knows whose work is merged
// or that have none (a branch no task names is kept: it may hold work), and
// makes the worktrees live tasks want that are missing. It returns the paths it removed.
func PruneWorktrees(s *store.Store) ([]string, error) {
	tasks, err := s.Tasks()
	if err != nil {
		return nil, err
	}
	byPath := map[string]*store.Task{}
	var repo *gitx.Pin
	for _, t := range tasks {
		if t.Worktree == nil || t.Repo == nil {
			continue
		}
		byPath[t.Worktree.Path] = t
		repo = t.Repo
		if wantsWorktree(t) {
			if err := ensureWorktree(t); err != nil {
				s.Warnf("%v", err)
			}
		}
	}
	if repo == nil {
		p, err := gitx.Locate(s.ProjectDir())
		if err != nil || p.WorkTree == "" {
			return nil, err
		}
		repo = &p
	}
	dir := filepath.Join(realPath(s.ProjectDir()), WorktreesDir)
	keep := func(path string) bool {
		t := byPath[path]
		return t != nil && wantsWorktree(t)
	}
	dropBranch := func(path string) string {
		t := byPath[path]
		if t == nil || t.Status == store.TaskKilled && branchHasWork(t) {
			return "" // a task pm no longer knows, or a killed task's commits: kept
		}
		return t.Worktree.Branch
	}
	return gitx.PruneWorktrees(*repo, dir, keep, dropBranch)
}
