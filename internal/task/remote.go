package task

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Code through a git remote (issue 24 point 4, docs/distributed.md "Code
// through a git remote"). A hub project whose checkout has the git remote
// git.remote names (default origin) keeps its tasks' branches on that
// remote: each machine makes a task's worktree from the remote when it
// needs it (LocalWorktree), pm done pushes the task's branch, and a merge
// moves the parent's branch on the remote with a compare-and-set, never a
// checkout of the user's. Everything below works on the task as this
// machine sees it (local): its own checkout, its own worktree path.

// remoteAttempts bounds how often a merge is redone because another
// machine moved the branch first.
const remoteAttempts = 8

// pushing, when set (tests), runs before each push of mergeRemote: what
// another machine may do between a fetch and a push.
var pushing func(ref string)

// maxDrops bounds the branches one command deletes from a remote (one
// push): a project with more leftovers has the rest deleted by the next
// commands that fetch the remote, each its share.
var maxDrops = 100

// mirrorDir is where pm keeps its mirror of remote name (gitx.Remote).
func mirrorDir(s *store.Store, name string) string { return s.GitMirrorDir(name) }

// tracking is the ref of pm's own that holds the remote's branch as last
// fetched (refs/pm/remote/NAME/heads/BRANCH): never checked out, so a
// merge into it writes no work tree.
func tracking(remote, branch string) string {
	return "refs/pm/remote/" + remote + "/" + strings.TrimPrefix(branch, "refs/")
}

// projectRemote is the remote new tasks' code goes through: none (nil)
// unless the project is on a hub, isolated in worktrees, git.remote is not
// "none" and repo has that remote.
func projectRemote(s *store.Store, repo gitx.Pin) (*gitx.Remote, error) {
	name := s.Config().GitRemote()
	if !s.OnHub() || name == "" {
		return nil, nil
	}
	r, err := gitx.RemoteOf(repo, name, mirrorDir(s, name))
	if errors.Is(err, gitx.ErrNoRemote) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Statef("fix remote."+name+".url (git remote set-url "+name+" URL), or run 'pm config set git.remote none'", "git remote %s: %v", name, err)
	}
	return &r, nil
}

// machine is this machine as one command (or one Settle) sees it: its
// checkout, located once, and each remote's branches as this command
// fetched them (and moved them by its own pushes since). A command locates
// the checkout once, not once per task, and fetches once, not once per
// step: every push is a compare-and-set, so a tip that moved since is
// found by the push, fetched and redone.
//
// A fetch that failed is not tried again by the same command (a remote
// that does not answer costs a command one timeout, not one per task),
// and the branches a command deletes from a remote go in one push at its
// end (pushDrops).
type machine struct {
	s       *store.Store
	located bool
	pin     gitx.Pin
	pinErr  error
	tips    map[string]map[string]string // remote name → refs/heads/... → commit
	failed  map[string]error             // remote name → this command's failed fetch
	// timeout bounds each git run against a remote (0: gitx's default);
	// tidying sets git.remote_timeout, moving sets it back.
	timeout time.Duration
	tidy    time.Duration                // git.remote_timeout, read once (tidyBound)
	drops   map[string]map[string]string // remote name → refs/heads/... to delete → its tip
	remotes map[string]gitx.Remote       // remote name → the remote of drops
	warned  map[string]bool              // remote name → its failure said once
}

// here is a fresh view of this machine, for one command.
func here(s *store.Store) *machine {
	return &machine{s: s, tips: map[string]map[string]string{}, failed: map[string]error{},
		drops: map[string]map[string]string{}, remotes: map[string]gitx.Remote{}, warned: map[string]bool{}}
}

// tidying is a view of this machine for a command whose remote work only
// tidies up and goes on without it (pm kill, pm reset): each git run
// against a remote is bounded by git.remote_timeout.
func tidying(s *store.Store) *machine {
	m := here(s)
	m.timeout = m.tidyBound()
	return m
}

// tidyBound is git.remote_timeout, read from the config once per command:
// the bound of what only tidies up (tidying's fetch, pushDrops).
func (m *machine) tidyBound() time.Duration {
	if m.tidy == 0 {
		m.tidy = m.s.Config().GitRemoteTimeout()
	}
	return m.tidy
}

// moving makes a tidying machine one whose remote work moves work again
// (pm kill --restart's revived task's worktree): git's own bound, and a
// fetch that failed while tidying is tried again; what a fetch that
// worked brought is kept.
func (m *machine) moving() {
	m.timeout = 0
	clear(m.failed)
}

// locate is gitx.Locate (tests count the lookups).
var locate = gitx.Locate

// checkout is this machine's checkout (the repository holding the project
// directory), located at the first call.
func (m *machine) checkout() (gitx.Pin, error) {
	if !m.located {
		m.pin, m.pinErr = locate(m.s.ProjectDir())
		m.located = true
	}
	return m.pin, m.pinErr
}

// local is t as this machine works on it. A task whose code goes through
// a remote gets this machine's checkout as its repository (the recorded
// pin when it is this machine's) and its worktree's path here.
func (m *machine) local(t *store.Task) (*store.Task, error) {
	if t.Worktree == nil || t.Worktree.Remote == "" {
		return t, nil
	}
	s := m.s
	lt := *t
	w := *t.Worktree
	w.Path = t.WorktreePath(s.ProjectDir())
	lt.Worktree = &w
	p, err := m.checkout()
	if err != nil || p.WorkTree == "" {
		return nil, errs.Statef("clone the project's repository here (git clone URL), then run pm again", "%s's code is on the git remote %s, but %s is not in a git checkout", t.ID, w.Remote, s.ProjectDir())
	}
	if t.Repo == nil || t.Repo.WorkTree != p.WorkTree || t.Repo.GitDir != p.GitDir {
		lt.Repo = &p
	}
	return &lt, nil
}

// remote is the remote lt's code goes through, as this machine's checkout
// names it, bounded by this command's timeout.
func (m *machine) remote(lt *store.Task) (gitx.Remote, error) {
	name := lt.Worktree.Remote
	r, err := gitx.RemoteOf(*lt.Repo, name, mirrorDir(m.s, name))
	if err != nil {
		return r, errs.Statef("add the remote to this checkout (git remote add "+name+" URL)", "%s's code is on the git remote %s: %v", lt.ID, name, err)
	}
	r.Timeout = m.timeout
	return r, nil
}

// fetched is r's branches as this command knows them: its own fetch when
// it made one (with its pushes since), else fetched now; a fetch that
// failed in this command is its error again, not a second try.
func (m *machine) fetched(r gitx.Remote, what string) (map[string]string, error) {
	if tips := m.tips[r.Name]; tips != nil {
		return tips, nil
	}
	if err := m.failed[r.Name]; err != nil {
		return nil, err
	}
	return m.fetch(r, what)
}

// fetch fetches r's branches now (an error with a Try line when the
// remote cannot be reached or refuses this machine).
func (m *machine) fetch(r gitx.Remote, what string) (map[string]string, error) {
	tips, err := r.Fetch()
	if err != nil {
		err = fetchError(r, err, what)
		m.failed[r.Name] = err
		return nil, err
	}
	m.tips[r.Name] = tips
	return tips, nil
}

// tidyWarning says, once per remote and command, that tidying r (deleting
// what, killed or merged tasks' branches) failed, with what to do: the
// command goes on, and the next command that reaches the remote deletes
// them.
func (m *machine) tidyWarning(r gitx.Remote, what string, err error) {
	if m.warned[r.Name] {
		return
	}
	m.warned[r.Name] = true
	try := "check that this machine reaches the remote (git fetch " + r.Name + ")"
	switch {
	case errors.Is(err, gitx.ErrDenied):
		try = "check this machine's credentials for " + r.Name + " (git fetch " + r.Name + " asks for them)"
	case errors.Is(err, gitx.ErrBusy):
		try = "let the other pm command using " + r.Name + " finish"
	}
	if errors.Is(err, gitx.ErrNoAnswer) || errors.Is(err, gitx.ErrBusy) {
		try += ", or give it longer (pm config set git.remote_timeout 1m; now " + m.tidyBound().String() + ")"
	}
	m.s.Warnf("remove %s from %s: %v (the next pm task, done, merge or kill that reaches %s deletes it)\nTry: %s", what, r.Name, err, r.Name, try)
}

// pushed notes this command's push of ref to hash ("" : deleted).
func (m *machine) pushed(r gitx.Remote, ref, hash string) {
	tips := m.tips[r.Name]
	switch {
	case tips == nil:
	case hash == "":
		delete(tips, ref)
	default:
		tips[ref] = hash
	}
}

// fetchError is a failed fetch with what to do: credentials refused (or
// asked for) and a remote not reached say so; pm's mirror is kept for
// both (gitx.Remote.Fetch).
func fetchError(r gitx.Remote, err error, what string) error {
	// The error stays in the chain (errors.Is finds gitx's kind: the tidy
	// warning's Try line reads it), its message as before.
	fail := func(try string, err error) error {
		return &errs.Error{Code: errs.Failure, Try: try + ", then " + what, Err: err}
	}
	switch {
	case errors.Is(err, gitx.ErrDenied):
		return fail("check this machine's credentials for "+r.Name+" (git fetch "+r.Name+" asks for them)", fmt.Errorf("%w (%v)", err, gitx.ErrDenied))
	case errors.Is(err, gitx.ErrUnreachable):
		return fail("check that this machine reaches the remote (git fetch "+r.Name+")", fmt.Errorf("%w (%v)", err, gitx.ErrUnreachable))
	case errors.Is(err, gitx.ErrBusy):
		return fail("let the other pm command using "+r.Name+" finish", err)
	}
	return fail("check that this machine reaches the remote (git fetch "+r.Name+")", err)
}

// remotePlan is a new task's worktree when its code goes through r: a
// top-level task starts at the user's HEAD, which must be on the remote
// branch it tracks (and merges into that branch); a subtask starts at its
// parent's branch on the remote (or the parent's start when the parent
// has pushed nothing yet) and merges into it.
func remotePlan(m *machine, r gitx.Remote, repo gitx.Pin, parent *store.Task) (*gitx.Worktree, error) {
	tips, err := m.fetched(r, "create the task again")
	if err != nil {
		return nil, err
	}
	if parent != nil {
		base := tips[parent.Worktree.Branch]
		if base == "" {
			base = parent.Worktree.Base
		}
		return &gitx.Worktree{Base: base, Into: parent.Worktree.Branch, Remote: r.Name}, nil
	}
	branch, head, err := gitx.StartPoint(repo, "")
	if errors.Is(err, gitx.ErrDetached) {
		return nil, errs.Statef("check out a branch (git switch -c work), or run 'pm config set isolation none' to work in the checkout", "no branch to merge the task into: %v", err)
	}
	if err != nil {
		return nil, errs.Failf("fix the repository (git status), then create the task again", "worktree: %v", err)
	}
	up, err := gitx.Upstream(repo, branch, r.Name)
	if err != nil {
		return nil, errs.Failf("fix the repository (git status), then create the task again", "worktree: %v", err)
	}
	short, upShort := strings.TrimPrefix(branch, "refs/heads/"), strings.TrimPrefix(up, "refs/heads/")
	tip := tips[up]
	if tip == "" || head == "" {
		return nil, errs.Statef("git push -u "+r.Name+" "+short+", then create the task again",
			"the git remote %s has no branch %s for the task to merge into (this project's code goes through %s)", r.Name, upShort, r.Name)
	}
	if on, err := gitx.IsAncestor(repo, head, tip); err != nil || !on {
		return nil, errs.Statef("git push "+r.Name+" "+short+" (or git pull first), then create the task again",
			"your %s (%.12s) is not on %s/%s: the task would start from work other machines cannot fetch", short, head, r.Name, upShort)
	}
	return &gitx.Worktree{Base: head, Into: up, Remote: r.Name}, nil
}

// LocalWorktree makes task id's worktree on this machine if it has none
// (from the remote's copy of the task's branch, else its start) and
// returns the directory its agents work in: what a machine calls before it
// runs a task's agents. A task without a worktree of its own works in the
// project directory, which is returned as it is.
func LocalWorktree(s *store.Store, st state.State, id string) (string, error) {
	t, err := st.Task(id)
	if err != nil {
		return "", err
	}
	if t.Worktree == nil || t.Repo == nil {
		return s.ProjectDir(), nil
	}
	if err := makeWorktree(here(s), t); err != nil {
		return "", err
	}
	return t.WorkDir(s.ProjectDir()), nil
}

// makeWorktree makes t's worktree here. For a task on a remote, the
// branch is first made from the remote's copy (or the task's start) when
// this machine has none, and a task whose merge waits on a conflict gets
// the conflict marked in its fresh worktree, as on the machine that found
// it (so pm done here cannot commit the task's side alone as the
// resolution).
func makeWorktree(m *machine, t *store.Task) error {
	if t.Worktree == nil || t.Worktree.Remote == "" {
		return ensureWorktree(m, t)
	}
	s := m.s
	lt, err := m.local(t)
	if err != nil {
		return err
	}
	if err := localBranch(m, lt); err != nil {
		return err
	}
	fresh := false
	if _, err := os.Lstat(filepath.Join(lt.Worktree.Path, ".git")); err != nil {
		fresh = true
	}
	if err := gitx.AddWorktree(*lt.Repo, *lt.Worktree); err != nil {
		return errs.Failf("fix the repository (git status), then try again", "worktree of %s: %v", t.ID, err)
	}
	if fresh && t.Merge != nil && t.Merge.State == store.MergeConflict && t.Merge.Onto != "" {
		if _, err := gitx.MarkConflicts(*lt.Repo, *lt.Worktree, t.Merge.Onto, stateRel(s, lt)); err != nil {
			return errs.Failf("fix the repository (git status), then try again", "mark %s's conflict: %v", t.ID, err)
		}
	}
	return nil
}

// localBranch makes lt's branch here when this machine has none: at the
// remote's copy of it, else at the task's start.
func localBranch(m *machine, lt *store.Task) error {
	if _, tip, err := gitx.StartPoint(*lt.Repo, lt.Worktree.Branch); err == nil && tip != "" {
		return nil
	}
	r, err := m.remote(lt)
	if err != nil {
		return err
	}
	tips, err := m.fetched(r, "try again")
	if err != nil {
		return err
	}
	at := tips[lt.Worktree.Branch]
	if at == "" {
		at = lt.Worktree.Base
	}
	if at == "" {
		return errs.Statef("push a first commit to "+r.Name, "%s starts from an empty repository", lt.ID)
	}
	if err := gitx.SetRef(*lt.Repo, lt.Worktree.Branch, at); err != nil {
		return errs.Failf("fetch it by hand (git fetch "+r.Name+"), then try again", "branch of %s: %v", lt.ID, err)
	}
	return nil
}

// mergeRemote lands lt's committed branch on the remote: the task's branch
// first (the remote's copy merged in when another machine pushed to it,
// e.g. a subtask merged into a parent's branch, then pushed with a
// compare-and-set), then the branch it merges into (merged in pm's own
// ref of the remote's tip, never a checkout, then pushed with a
// compare-and-set). A push refused because another machine moved the
// branch first is fetched and redone. A conflict (in either step) changes
// nothing on the remote and returns the tip it was found against.
func mergeRemote(m *machine, lt *store.Task, favor gitx.Favor) (gitx.MergeResult, string, error) {
	s := m.s
	w := lt.Worktree
	r, err := m.remote(lt)
	if err != nil {
		return gitx.MergeResult{}, "", err
	}
	safe := "; the task's work is safe on " + strings.TrimPrefix(w.Branch, "refs/heads/") + " and the task waits"
	msg := "Merge " + strings.TrimPrefix(w.Branch, "refs/heads/") + ": " + lt.Description
	get := m.fetched // this command's fetch, if it made one; after a refused push, a fresh one
	for range remoteAttempts {
		tips, err := get(r, "run 'pm done' (or 'pm merge "+lt.ID+"') again"+safe)
		if err != nil {
			return gitx.MergeResult{}, "", err
		}
		get = m.fetch
		// The task's branch.
		_, mine, err := gitx.StartPoint(*lt.Repo, w.Branch)
		if err != nil {
			return gitx.MergeResult{}, "", err
		}
		theirs := tips[w.Branch]
		if theirs != "" && theirs != mine {
			mr, err := mergeTracked(s, lt, r, w.Branch, theirs, w.Branch, "Merge "+r.Name+"'s "+strings.TrimPrefix(w.Branch, "refs/heads/"), gitx.FavorNone)
			if err != nil || len(mr.Conflicts) > 0 || len(mr.Dirty) > 0 {
				return mr, theirs, err
			}
			if _, mine, err = gitx.StartPoint(*lt.Repo, w.Branch); err != nil {
				return gitx.MergeResult{}, "", err
			}
		}
		if theirs != mine {
			if err := r.Push(w.Branch, theirs, mine); errors.Is(err, gitx.ErrStale) {
				continue
			} else if err != nil {
				return gitx.MergeResult{}, "", errs.Failf("check the remote (git push "+r.Name+"), then run 'pm done' again"+safe, "push: %v", err)
			}
			m.pushed(r, w.Branch, mine)
		}
		// The branch it merges into.
		onto := tips[w.Into]
		if onto == "" && lt.ParentID != "" {
			onto = w.Base // a parent that has pushed nothing yet: its start
		}
		if onto == "" {
			return gitx.MergeResult{}, "", errs.Statef("git push "+r.Name+" "+strings.TrimPrefix(w.Into, "refs/heads/")+safe,
				"the git remote %s has no branch %s to merge %s into", r.Name, strings.TrimPrefix(w.Into, "refs/heads/"), lt.ID)
		}
		mr, err := mergeTracked(s, lt, r, w.Into, onto, w.Branch, msg, favor)
		if err != nil || len(mr.Conflicts) > 0 || mr.Hash == "" {
			return mr, onto, err
		}
		if pushing != nil {
			pushing(w.Into)
		}
		if err := r.Push(w.Into, tips[w.Into], mr.Hash); errors.Is(err, gitx.ErrStale) {
			continue
		} else if err != nil {
			return gitx.MergeResult{}, "", errs.Failf("check the remote (git push "+r.Name+"), then run 'pm merge "+lt.ID+"' or 'pm done' again"+safe, "push: %v", err)
		}
		m.pushed(r, w.Into, mr.Hash)
		mr.CheckedOut = ""
		return mr, onto, nil
	}
	return gitx.MergeResult{}, "", errs.Failf("run 'pm done' (or 'pm merge "+lt.ID+"') again"+safe,
		"the git remote %s's branches kept moving: %d merges were overtaken by other machines' pushes", r.Name, remoteAttempts)
}

// mergeTracked merges from (a local branch) into branch's tip on the
// remote, held in pm's own ref for it, or, with from the task's branch
// and branch the same, the remote's copy into the local branch (written
// into this machine's worktree of the task where it is checked out).
func mergeTracked(s *store.Store, lt *store.Task, r gitx.Remote, branch, tip, from, msg string, favor gitx.Favor) (gitx.MergeResult, error) {
	ref := tracking(r.Name, branch)
	if err := gitx.SetRef(*lt.Repo, ref, tip); err != nil {
		return gitx.MergeResult{}, errs.Failf("fix the repository (git status)", "merge: %v", err)
	}
	into := ref
	if from == branch {
		from, into = ref, branch
	}
	mr, err := gitx.Merge(*lt.Repo, from, into, stateRel(s, lt), msg, s.Now(), favor)
	if err != nil {
		return mr, errs.Failf("fix the repository (git status), then run 'pm merge "+lt.ID+"'; the task's work is safe on "+strings.TrimPrefix(lt.Worktree.Branch, "refs/heads/"), "merge: %v", err)
	}
	if mr.UpToDate {
		mr.Hash = ""
	}
	return mr, nil
}

// dropRemoteBranch deletes a merged task's branch from the remote (what
// is merged is on the branch it merged into), at the tip this command
// knows (its own push: no fetch after a merge); a failure is a warning,
// and a branch moved meanwhile stays (Settle finds it where it is seen).
func dropRemoteBranch(m *machine, lt *store.Task) {
	r, tips, ok := remoteTips(m, lt)
	if !ok {
		return
	}
	if old := tips[lt.Worktree.Branch]; old != "" {
		deleteBranch(m, r, lt, old)
	}
}

// dropKilledBranch deletes a killed task's branch from the remote, like a
// merged one's. Work it holds that this machine's branch of the task
// lacks is brought here first: the local branch (removed or never made
// here) is set to the remote's tip when it has none or is behind it, and
// is kept like any killed task's branch with commits; a remote copy that
// diverged from this machine's branch stays on the remote (a warning).
func dropKilledBranch(m *machine, lt *store.Task) {
	r, tips, ok := remoteTips(m, lt)
	if !ok {
		return
	}
	w := lt.Worktree
	theirs := tips[w.Branch]
	if theirs == "" {
		return
	}
	_, mine, err := gitx.StartPoint(*lt.Repo, w.Branch)
	if err != nil {
		m.s.Warnf("remove %s from %s: %v", w.Branch, r.Name, err)
		return
	}
	if mine != theirs && theirs != w.Base {
		if mine == "" || isAncestor(*lt.Repo, mine, theirs) {
			if err := gitx.SetRef(*lt.Repo, w.Branch, theirs); err != nil {
				m.s.Warnf("keep %s's work from %s: %v", lt.ID, r.Name, err)
				return
			}
		} else if ahead, err := gitx.IsAncestor(*lt.Repo, theirs, mine); err != nil || !ahead {
			m.s.Warnf("%s on %s holds work this machine's %s lacks: left on %s", strings.TrimPrefix(w.Branch, "refs/heads/"), r.Name, strings.TrimPrefix(w.Branch, "refs/heads/"), r.Name)
			return
		}
	}
	deleteBranch(m, r, lt, theirs)
}

// remoteTips is lt's remote and its branches as this command knows them
// (fetched once), or a warning and !ok.
func remoteTips(m *machine, lt *store.Task) (gitx.Remote, map[string]string, bool) {
	r, err := m.remote(lt)
	if err != nil {
		m.s.Warnf("%v", err)
		return r, nil, false
	}
	tips, err := m.fetched(r, "try again")
	if err != nil {
		m.tidyWarning(r, lt.Worktree.Branch, err)
		return r, nil, false
	}
	return r, tips, true
}

// deleteBranch has lt's branch deleted from r if it still is at old (a
// compare-and-set: a branch moved meanwhile is left to whoever moved it),
// with the command's other deletions, by pushDrops.
func deleteBranch(m *machine, r gitx.Remote, lt *store.Task, old string) {
	if m.drops[r.Name] == nil {
		m.drops[r.Name] = map[string]string{}
		m.remotes[r.Name] = r
	}
	m.drops[r.Name][lt.Worktree.Branch] = old
}

// pushDrops deletes the branches this command set to delete, one push per
// remote (at most maxDrops branches each: the rest stay for the next
// command that fetches the remote), bounded by git.remote_timeout: it
// only tidies up, so a remote that does not answer is a warning.
func (m *machine) pushDrops() {
	names := make([]string, 0, len(m.drops))
	for name := range m.drops {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		drops, r := m.drops[name], m.remotes[name]
		delete(m.drops, name)
		refs := make([]string, 0, len(drops))
		for ref := range drops {
			refs = append(refs, ref)
		}
		sort.Strings(refs)
		batch := map[string]string{}
		for _, ref := range refs[:min(len(refs), maxDrops)] {
			batch[ref] = drops[ref]
		}
		r.Timeout = m.tidyBound()
		gone, err := r.Delete(batch)
		for _, ref := range gone {
			m.pushed(r, ref, "")
		}
		if err != nil {
			what := strings.Join(refs[:min(len(refs), 3)], ", ")
			if len(batch) > 3 {
				what += fmt.Sprintf(" and %d more", len(batch)-3)
			}
			m.tidyWarning(r, what, err)
		}
		if rest := len(refs) - len(batch); rest > 0 {
			m.s.Warnf("%s: %d killed or merged tasks' branches to delete, %d deleted at most per command: %d left for the next command", r.Name, len(refs), maxDrops, rest)
		}
	}
}

// repairRemoteBranches deletes from the remote the branches of this
// project's tasks that are killed, or merged, found in what this command
// fetched (no fetch of its own), as Settle removes a stray worktree: what
// a pm kill or done that could not reach the remote, or was killed
// part-way, left there. A branch no task of this project names is left
// alone (another project may share the remote, and it may hold work).
// They go with the command's own deletions, in one push (pushDrops): a
// command that drops a branch ends with it.
func repairRemoteBranches(m *machine, st state.State) {
	defer m.pushDrops()
	for name, tips := range m.tips {
		for ref := range tips {
			id, ok := strings.CutPrefix(ref, gitx.BranchPrefix)
			if !ok {
				continue
			}
			t, err := st.Task(id)
			if err != nil || t.Worktree == nil || t.Worktree.Remote != name || t.Worktree.Branch != ref || t.Repo == nil {
				continue
			}
			merged := t.Status == store.TaskDone && !t.Held()
			if t.Status != store.TaskKilled && !merged {
				continue
			}
			lt, err := m.local(t)
			if err != nil {
				continue
			}
			if merged {
				dropRemoteBranch(m, lt)
			} else {
				dropKilledBranch(m, lt)
			}
		}
	}
}

// pushBranch pushes lt's branch (a task held for review: whoever reviews
// it, on any machine, fetches it), its remote copy merged in first.
func pushBranch(m *machine, lt *store.Task) error {
	r, err := m.remote(lt)
	if err != nil {
		return err
	}
	w := lt.Worktree
	safe := "; the task's work is safe on " + strings.TrimPrefix(w.Branch, "refs/heads/") + " here"
	get := m.fetched
	for range remoteAttempts {
		tips, err := get(r, "run 'pm done' again"+safe)
		if err != nil {
			return err
		}
		get = m.fetch
		_, mine, err := gitx.StartPoint(*lt.Repo, w.Branch)
		if err != nil {
			return err
		}
		theirs := tips[w.Branch]
		if theirs == mine {
			return nil
		}
		if theirs != "" {
			if ok, err := gitx.IsAncestor(*lt.Repo, theirs, mine); err != nil || !ok {
				return errs.Statef("run 'pm done' again (its merge takes in the remote's copy)"+safe,
					"%s on %s has work this machine's branch lacks", strings.TrimPrefix(w.Branch, "refs/heads/"), r.Name)
			}
		}
		if err := r.Push(w.Branch, theirs, mine); errors.Is(err, gitx.ErrStale) {
			continue
		} else if err != nil {
			return errs.Failf("check the remote (git push "+r.Name+"), then run 'pm done' again"+safe, "push: %v", err)
		}
		m.pushed(r, w.Branch, mine)
		return nil
	}
	return errs.Failf("run 'pm done' again"+safe, "%s on %s kept moving", w.Branch, r.Name)
}

// remoteCopy points pm's ref of branch on lt's remote at the branch's tip
// as this command fetched it (at orElse, a commit, when the remote has no
// such branch) and returns the ref; "" when there is neither.
func remoteCopy(m *machine, lt *store.Task, branch, orElse string) (string, error) {
	r, err := m.remote(lt)
	if err != nil {
		return "", err
	}
	tips, err := m.fetched(r, "try again")
	if err != nil {
		return "", err
	}
	tip := tips[branch]
	if tip == "" {
		tip = orElse
	}
	if tip == "" {
		return "", nil
	}
	ref := tracking(r.Name, branch)
	if err := gitx.SetRef(*lt.Repo, ref, tip); err != nil {
		return "", errs.Failf("fix the repository (git status)", "%v", err)
	}
	return ref, nil
}

// isAncestor reports whether a is an ancestor of b in repo (false when it
// cannot tell).
func isAncestor(repo gitx.Pin, a, b string) bool {
	ok, err := gitx.IsAncestor(repo, a, b)
	return err == nil && ok
}
