package task

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// WorktreesDir is where a project's task worktrees live: in the project
// directory, beside the state directory (docs/spec.md, "Worktrees").
const WorktreesDir = store.WorktreesDir

// worktreePlan is the worktree a new task gets, all but its path (which
// needs the task's id): none without a repository, with isolation "none",
// for runtime none (no agent of pm's works there: the person or script
// acting as the owner works where they are, in the checkout), or under a
// parent that has none; a subtask's starts from its parent's branch, a
// top-level task's from the branch HEAD names now. On a hub project with a
// git remote, both are the remote's (remotePlan).
func worktreePlan(m *machine, st state.State, repo *gitx.Pin, parentID string, runtime config.RuntimeName) (*gitx.Worktree, error) {
	s := m.s
	if repo == nil || repo.WorkTree == "" || s.Config().Isolation == config.IsolationNone || runtime == config.RuntimeNone {
		return nil, nil
	}
	into := ""
	if parentID != "" {
		p, err := st.Task(parentID)
		if err != nil {
			return nil, err
		}
		if p.Worktree == nil {
			return nil, nil // the parent works in the checkout: so does its subtask
		}
		if p.Worktree.Remote != "" {
			lp, err := m.local(p)
			if err != nil {
				return nil, err
			}
			r, err := m.remote(lp)
			if err != nil {
				return nil, err
			}
			return remotePlan(m, r, *lp.Repo, p)
		}
		into = p.Worktree.Branch
	} else if r, err := projectRemote(s, *repo); err != nil {
		return nil, err
	} else if r != nil {
		return remotePlan(m, *r, *repo, nil)
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
// A task whose code goes through a remote is made here only when this
// machine had begun it (its branch or worktree is here): other machines'
// tasks are made where they are needed (LocalWorktree).
func ensureWorktree(m *machine, t *store.Task) error {
	if t.Worktree == nil || t.Repo == nil || !t.Live() {
		return nil
	}
	if t.Worktree.Remote != "" {
		if !begunHere(m, t) {
			return nil
		}
		return makeWorktree(m, t)
	}
	if err := gitx.AddWorktree(*t.Repo, *t.Worktree); err != nil {
		return errs.Failf("fix the repository (git status), then run 'pm status' to make it again", "worktree of %s: %v", t.ID, err)
	}
	return nil
}

// begunHere reports whether this machine holds t's worktree, or git's
// record of it (a remote task's worktree made here, whole or half).
func begunHere(m *machine, t *store.Task) bool {
	lt, err := m.local(t)
	if err != nil {
		return false
	}
	if _, err := os.Lstat(lt.Worktree.Path); err == nil {
		return true
	}
	_, err = os.Lstat(filepath.Join(gitCommon(*lt.Repo), "worktrees", filepath.Base(lt.Worktree.Path)))
	return err == nil
}

// dropWorktree removes t's worktree on this machine and, unless
// keepBranch, its branch; a merged or killed remote task's branch goes
// from the remote too (a killed one's work kept here: dropKilledBranch).
func dropWorktree(m *machine, t *store.Task) {
	if t.Worktree == nil || t.Repo == nil {
		return
	}
	s := m.s
	lt, err := m.local(t)
	if err != nil {
		s.Warnf("remove the worktree of %s: %v", t.ID, err)
		return
	}
	keep := keepBranch(lt)
	if err := gitx.RemoveWorktree(*lt.Repo, *lt.Worktree, keep); err != nil {
		s.Warnf("remove the worktree of %s: %v", t.ID, err)
	}
	if lt.Worktree.Remote != "" {
		if err := gitx.DropRef(*lt.Repo, tracking(lt.Worktree.Remote, lt.Worktree.Branch)); err != nil {
			s.Warnf("remove pm's copy of %s: %v", lt.Worktree.Branch, err)
		}
		switch {
		case t.Status == store.TaskDone && !t.Held():
			dropRemoteBranch(m, lt)
		case t.Status == store.TaskKilled:
			dropKilledBranch(m, lt)
		}
	}
}

// keepBranch: a task's branch goes once its work is merged, or when it
// has none; commits not merged stay (nothing committed is lost).
func keepBranch(t *store.Task) bool {
	merged := t.Status == store.TaskDone && !t.Held()
	return !merged && branchHasWork(t)
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
func PruneWorktrees(s *store.Store, st state.State) ([]string, error) {
	return pruneWorktrees(here(s), st, false)
}

// pruneWorktrees is PruneWorktrees; with all (pm reset), every worktree
// goes and none is made.
func pruneWorktrees(m *machine, st state.State, all bool) ([]string, error) {
	s := m.s
	tasks, err := st.Tasks()
	if err != nil {
		return nil, err
	}
	byPath := map[string]*store.Task{}
	var repo *gitx.Pin
	for _, t := range tasks {
		if t.Worktree == nil || t.Repo == nil {
			continue
		}
		lt, err := m.local(t)
		if err != nil {
			continue
		}
		byPath[lt.Worktree.Path] = lt
		repo = lt.Repo
		if !all && wantsWorktree(t) {
			if err := ensureWorktree(m, t); err != nil {
				s.Warnf("%v", err)
			}
		}
	}
	if repo == nil {
		p, err := m.checkout()
		if err != nil || p.WorkTree == "" {
			return nil, err
		}
		repo = &p
	}
	dir := filepath.Join(realPath(s.ProjectDir()), WorktreesDir)
	if all {
		if err := gitx.RemoveSpare(*repo, dir); err != nil {
			return nil, err
		}
	}
	keep := func(path string) bool {
		t := byPath[path]
		return !all && t != nil && wantsWorktree(t)
	}
	dropBranch := func(path string) string {
		t := byPath[path]
		if t == nil || keepBranch(t) {
			return "" // a task pm no longer knows, or commits not merged: kept
		}
		return t.Worktree.Branch
	}
	return gitx.PruneWorktrees(*repo, dir, keep, dropBranch)
}

// WorktreeFindings lists, changing nothing, what is wrong with the
// worktrees: stray are worktrees (or git's records of them) that no task
// wants, missing are the worktrees of tasks that want one and do not have
// it whole. Only what is there is looked at (each entry's task is read),
// so it is cheap enough for every Settle.
func WorktreeFindings(s *store.Store, st state.State, live []*store.Task) (stray, missing []string) {
	return worktreeFindings(here(s), st, live)
}

// worktreeFindings is WorktreeFindings on m: the checkout located once.
func worktreeFindings(m *machine, st state.State, live []*store.Task) (stray, missing []string) {
	s := m.s
	wanted := func(id string) bool {
		t, err := st.Task(id)
		return err == nil && wantsWorktree(t)
	}
	dir := filepath.Join(realPath(s.ProjectDir()), WorktreesDir)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != ".gitignore" && !gitx.IsSpare(e.Name()) && !wanted(e.Name()) {
			stray = append(stray, filepath.Join(dir, e.Name()))
		}
	}
	var repo *gitx.Pin
	for _, t := range live {
		if t.Worktree == nil || t.Repo == nil {
			continue
		}
		if t.Worktree.Remote != "" && !begunHere(m, t) {
			continue // made where it is needed, not on every machine
		}
		lt, err := m.local(t)
		if err != nil {
			continue
		}
		repo = lt.Repo
		if _, err := os.Lstat(filepath.Join(lt.Worktree.Path, ".git")); err != nil {
			missing = append(missing, lt.Worktree.Path)
		}
	}
	if repo != nil {
		admin := filepath.Join(gitCommon(*repo), "worktrees")
		ents, _ := os.ReadDir(admin)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(admin, e.Name(), "gitdir"))
			if err != nil {
				continue
			}
			path := filepath.Dir(strings.TrimSpace(string(b)))
			if filepath.Dir(path) == dir && !wanted(filepath.Base(path)) && !slices.Contains(stray, path) {
				stray = append(stray, path)
			}
		}
	}
	return stray, missing
}

// gitCommon is the directory holding p's worktrees/ records.
func gitCommon(p gitx.Pin) string {
	if p.CommonDir != "" {
		return p.CommonDir
	}
	return p.GitDir
}

// PrepareSpare makes, when the project's tasks get worktrees and none is
// ready, a spare checkout of the commit the next top-level task would
// start from (gitx.PrepareSpare): the next worktree then costs only the
// files that differ. The supervisor runs it, off every command's path.
func PrepareSpare(s *store.Store, st state.State) error {
	dir := filepath.Join(realPath(s.ProjectDir()), WorktreesDir)
	if gitx.SpareCommit(dir) != "" {
		return nil // one read per agent start while a spare waits
	}
	p, err := gitx.Locate(s.ProjectDir())
	if err != nil || p.WorkTree == "" {
		return nil
	}
	if r, err := projectRemote(s, p); err != nil || r != nil {
		return nil // a remote's start point is fetched when a task needs it: no spare ahead
	}
	// Any runtime but none gets a worktree: exec stands for them.
	plan, err := worktreePlan(here(s), st, &p, "", config.RuntimeExec)
	if err != nil || plan == nil || plan.Base == "" {
		return nil // no worktrees here (or no branch to start from): nothing to prepare
	}
	return gitx.PrepareSpare(p, dir, plan.Base)
}

// RepairWorktrees is Settle's worktree step alone: a supervisor leaving
// runs it, since in a supervised project no other command may come to
// remove the worktree of a task whose pm done was killed after its mark.
func RepairWorktrees(s *store.Store, st state.State) error {
	live, err := st.LiveTasks()
	if err != nil {
		return err
	}
	repairWorktrees(here(s), st, live)
	return nil
}

// repairWorktrees prunes and remakes worktrees where WorktreeFindings
// finds something wrong (Settle).
func repairWorktrees(m *machine, st state.State, live []*store.Task) {
	stray, missing := worktreeFindings(m, st, live)
	if len(stray) == 0 && len(missing) == 0 {
		return
	}
	if _, err := pruneWorktrees(m, st, false); err != nil {
		m.s.Warnf("worktrees: %v", err)
	}
}

// IsolationOf says where new tasks of the project work: "worktree" (each
// in its own, runtime none aside), or "none: " and why they work in the
// checkout (pm status says it).
func IsolationOf(s *store.Store) string {
	if s.Config().Isolation == config.IsolationNone {
		return "none: isolation \"none\" in config.json, tasks work in the checkout"
	}
	p, err := gitx.Locate(s.ProjectDir())
	if err != nil || p.WorkTree == "" {
		return "none: not a git repository, tasks work in the project directory"
	}
	if !s.OnHub() {
		return "worktree"
	}
	r, err := projectRemote(s, p)
	switch {
	case err != nil:
		return "worktree, on the machine that makes each task: " + err.Error()
	case r == nil && s.Config().GitRemote() == "":
		return "worktree, on the machine that makes each task (git.remote \"none\")"
	case r == nil:
		return "worktree, on the machine that makes each task (this checkout has no git remote \"" + s.Config().GitRemote() + "\")"
	}
	return "worktree through the git remote " + r.Name + ": merges move " + r.Name + "'s branches, never this checkout (git pull to see them)"
}
