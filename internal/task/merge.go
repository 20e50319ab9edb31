package task

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// stateRel is the state directory relative to the root of t's repository
// (what a commit or merge there never touches).
func stateRel(s *store.Store, t *store.Task) string {
	if t.Repo != nil && t.Repo.WorkTree != "" {
		if rel, err := filepath.Rel(t.Repo.WorkTree, realPath(s.Root)); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return store.DirName
}

// commitWork commits t's work: in its worktree onto its branch (after a
// conflict was resolved there, with the tip it was found against as a
// second parent), or, without a worktree, in the pinned checkout.
func commitWork(s *store.Store, t *store.Task) (gitx.Result, error) {
	msg := "[plasmodium] " + t.ID + ": " + t.Description
	opt := gitx.Options{Exclude: s.Config().Commit.Exclude} // files that look like secrets stay out
	if t.Worktree == nil || t.Repo == nil {
		return gitx.CommitPinned(s.ProjectDir(), t.Repo, store.DirName, msg, s.Now(), opt)
	}
	if t.Merge != nil && t.Merge.State == store.MergeConflict {
		if marked := stillMarked(t); len(marked) > 0 {
			return gitx.Result{}, errs.Statef("resolve the conflicts in "+t.Worktree.Path+" (remove the <<<<<<< ======= >>>>>>> lines), then run 'pm done' again",
				"%s still holds conflict markers: %s", t.ID, strings.Join(marked, ", "))
		}
		opt.Merging = t.Merge.Onto
	}
	wp, err := gitx.WorktreePin(*t.Repo, *t.Worktree)
	if err != nil {
		return gitx.Result{}, err
	}
	return gitx.CommitPinned(t.Worktree.Path, &wp, stateRel(s, t), msg, s.Now(), opt)
}

// stillMarked lists the conflicting paths whose files in the worktree
// still hold a conflict marker line.
func stillMarked(t *store.Task) []string {
	var out []string
	for _, p := range t.Merge.Paths {
		b, err := os.ReadFile(filepath.Join(t.Worktree.Path, filepath.FromSlash(p)))
		if err != nil {
			continue
		}
		for _, m := range []string{"<<<<<<< ", ">>>>>>> "} {
			if bytes.HasPrefix(b, []byte(m)) || bytes.Contains(b, []byte("\n"+m)) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// mergeWork merges t's branch into the branch it merges into: here, or
// on the remote its code goes through (mergeRemote). onto is the tip of
// the branch merged into that a conflict was found against.
func mergeWork(m *machine, t *store.Task, favor gitx.Favor) (res gitx.MergeResult, onto string, err error) {
	s := m.s
	w := t.Worktree
	if w.Remote != "" {
		return mergeRemote(m, t, favor)
	}
	msg := "Merge " + strings.TrimPrefix(w.Branch, "refs/heads/") + ": " + t.Description
	res, err = gitx.Merge(*t.Repo, w.Branch, w.Into, stateRel(s, t), msg, s.Now(), favor)
	if err != nil {
		var le *gitx.LockError
		if errors.As(err, &le) {
			return res, "", errs.Failf(le.Try()+"; the task's work is safe on "+w.Branch, "merge: %v", err)
		}
		return res, "", errs.Failf("fix the repository (git status), then run 'pm merge "+t.ID+"'; the task's work is safe on "+w.Branch, "merge: %v", err)
	}
	if len(res.Conflicts) > 0 {
		if _, onto, err = gitx.StartPoint(*t.Repo, w.Into); err != nil {
			return res, "", errs.Failf("fix the repository (git status)", "merge: %v", err)
		}
	}
	return res, onto, nil
}

// land merges t's committed branch (t as this machine sees it: local), or
// says why it waits: held for review,
// a conflict (the worktree then holds the merge with conflict markers), or
// local changes where the target is checked out. A wait is recorded on
// the task (Merge), asked of whoever decides (the parent's owner for a
// subtask, else the human), and returned as an exit-5 error that lists the
// ways on; the caller holds the tasks lock.
func land(m *machine, st state.State, actor store.Actor, t *store.Task, favor gitx.Favor, review bool) (*gitx.MergeResult, error) {
	s := m.s
	if review {
		if t.Worktree.Remote != "" {
			// Whoever reviews, on whatever machine, reads it from the remote.
			if err := pushBranch(m, t); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	mr, onto, err := mergeWork(m, t, favor)
	if err != nil {
		return nil, err
	}
	crashpoint.Hit("task.merge.merged")
	switch {
	case len(mr.Conflicts) > 0:
		if _, err := gitx.MarkConflicts(*t.Repo, *t.Worktree, onto, stateRel(s, t)); err != nil {
			return nil, errs.Failf("fix the repository (git status)", "merge: %v", err)
		}
		return nil, wait(s, st, actor, t, &store.TaskMerge{State: store.MergeConflict, Paths: mr.Conflicts, Onto: onto})
	case len(mr.Dirty) > 0:
		return nil, wait(s, st, actor, t, &store.TaskMerge{State: store.MergeDirty, Paths: mr.Dirty})
	}
	return &mr, nil
}

// waitsTry is what to do about a merge that waits; where is the task's
// worktree as its reader finds it (worktreeHere, worktreeAnywhere).
func waitsTry(t *store.Task, m *store.TaskMerge, where string) string {
	into := t.IntoName()
	switch m.State {
	case store.MergeConflict:
		return "resolve the conflicts in " + where + " and run 'pm done' again; or 'pm merge " + t.ID + " --theirs' (the task's version) or '--ours' (" + into + "'s); or 'pm reject " + t.ID + " \"why\"'"
	case store.MergeDirty:
		return "commit or undo your changes to " + strings.Join(m.Paths, ", ") + " in " + into + "'s checkout, then 'pm merge " + t.ID + "'; or 'pm reject " + t.ID + " \"why\"'"
	}
	return "'pm diff " + t.ID + "', then 'pm merge " + t.ID + "' or 'pm reject " + t.ID + " \"why\"'"
}

// worktreeHere is t's worktree as a reader on this machine finds it: the
// recorded path, or, for a task whose code goes through a remote (the
// recorded path is the machine's that made it), this machine's, which
// 'pm diff' makes when it is not here yet.
func worktreeHere(s *store.Store, t *store.Task) string {
	if t.Worktree.Remote == "" {
		return t.Worktree.Path
	}
	p := t.WorktreePath(s.ProjectDir())
	if _, err := os.Lstat(filepath.Join(p, ".git")); err != nil {
		return p + " (made on this machine by 'pm diff " + t.ID + "')"
	}
	return p
}

// worktreeAnywhere is t's worktree in a text read on any machine (a
// request, a message): for a task whose code goes through a remote, the
// place in whichever project directory the reader works in.
func worktreeAnywhere(t *store.Task) string {
	if t.Worktree.Remote == "" {
		return t.Worktree.Path
	}
	return store.WorktreesDir + "/" + t.ID + " of your project directory ('pm diff " + t.ID + "' makes it on your machine)"
}

// waitsWhy says why a merge waits.
func waitsWhy(t *store.Task, m *store.TaskMerge) string {
	into := t.IntoName()
	switch m.State {
	case store.MergeConflict:
		return fmt.Sprintf("%s conflicts with %s in %s", t.ID, into, strings.Join(m.Paths, ", "))
	case store.MergeDirty:
		return fmt.Sprintf("%s's checkout has local changes to %s, which %s changes", into, strings.Join(m.Paths, ", "), t.ID)
	}
	return fmt.Sprintf("%s waits for review before it is merged into %s", t.ID, into)
}

// wait records m on t, asks whoever decides, and is the error pm done
// returns (the task stays active).
func wait(s *store.Store, st state.State, actor store.Actor, t *store.Task, m *store.TaskMerge) error {
	ask(s, st, actor, t, m)
	if _, err := st.UpdateTask(t.ID, func(x *store.Task) error { x.Merge = m; return nil }); err != nil {
		return err
	}
	return errs.Statef(waitsTry(t, m, worktreeHere(s, t))+"; the task is still active and its work is safe on "+strings.TrimPrefix(t.Worktree.Branch, "refs/heads/"), "%s", waitsWhy(t, m))
}

// ask tells whoever decides about a merge that waits: the parent task's
// owner (through its inbox) for a subtask, the human (a request) for a
// top-level task. m.Request gets the request's id.
func ask(s *store.Store, st state.State, actor store.Actor, t *store.Task, m *store.TaskMerge) {
	text := waitsWhy(t, m) + ". Ways on: " + waitsTry(t, m, worktreeAnywhere(t)) + "."
	s.Notify(bus.Event{Kind: bus.EvMergeWaits, Actor: actor.Name, TaskID: t.ID, Text: waitsWhy(t, m),
		Data: bus.MergeWaits{State: m.State, Paths: m.Paths, Into: t.Worktree.Into}})
	if t.ParentID != "" {
		if p, err := st.Task(t.ParentID); err == nil {
			if _, err := inbox.Send(s, st, inbox.Message{Kind: inbox.KindNotice, From: actor.Name, To: p.Owner, TaskID: t.ID, Text: text}); err != nil {
				s.Warnf("notify %s: %v", p.Owner, err)
			}
			return
		}
	}
	if t.Merge != nil && t.Merge.Request != "" && t.Merge.State == m.State {
		m.Request = t.Merge.Request // asked already (pm done run again)
		return
	}
	r, err := request.CreateFor(s, st, actor, t.ID, text)
	if err != nil {
		s.Warnf("ask about %s's merge: %v", t.ID, err)
		return
	}
	m.Request = r.ID
}

// settleRequest answers the request a merge that waited had raised.
func settleRequest(s *store.Store, st state.State, actor store.Actor, m *store.TaskMerge, how string) {
	if m == nil || m.Request == "" {
		return
	}
	if _, err := request.Answer(s, st, actor, m.Request, how); err != nil && !errs.Is(err, errs.State) {
		s.Warnf("answer %s: %v", m.Request, err)
	}
}

// MergeResult says what pm merge did.
type MergeResult struct {
	Task      *store.Task      `json:"task"`
	Merge     gitx.MergeResult `json:"merge"`
	Unblocked []string         `json:"unblocked"`
}

// mayDecide: the human decides a top-level task's merge; a subtask's, the
// human or its parent's owner.
func mayDecide(s *store.Store, st state.State, actor store.Actor, t *store.Task) error {
	if actor.Agent == nil {
		return nil
	}
	if t.ParentID != "" {
		if p, err := st.Task(t.ParentID); err == nil && p.Owner == actor.Name {
			return nil
		}
	}
	return errs.Statef("the human (or a subtask's parent owner) merges and rejects", "%s may not decide %s's merge", actor.Name, t.ID)
}

// waiting finds t's merge that waits for a decision (exit 5 otherwise).
func waiting(t *store.Task) error {
	if t.Worktree == nil {
		return errs.Statef("only a task with a worktree is merged (see 'pm status "+t.ID+"')", "task %s has no worktree of its own", t.ID)
	}
	if t.Merge == nil || !(t.Status == store.TaskActive || t.Status == store.TaskDone) {
		what := "not waiting for a merge"
		if t.Status == store.TaskActive {
			what = "active: its owner merges it with 'pm done'"
		}
		return errs.Statef("see 'pm status "+t.ID+"'", "task %s is %s", t.ID, what)
	}
	return nil
}

// Merge is pm merge: the human (or a subtask's parent owner) merges a task
// whose merge waits (review, a conflict, local changes), settling
// conflicting paths by favor; the task is then done, its worktree removed
// and its dependants unblocked.
func Merge(s *store.Store, l *agent.Launcher, actor store.Actor, taskID string, favor gitx.Favor) (*MergeResult, error) {
	st := l.State
	if _, err := st.Task(taskID); err != nil {
		return nil, err
	}
	res := &MergeResult{Unblocked: []string{}}
	var t *store.Task
	var was *store.TaskMerge
	m := here(s)
	err := st.WithTasks(func() error {
		cur, err := st.Task(taskID)
		if err != nil {
			return err
		}
		if err := mayDecide(s, st, actor, cur); err != nil {
			return err
		}
		if err := waiting(cur); err != nil {
			return err
		}
		was = cur.Merge
		if cur.Worktree.Remote != "" {
			if err := makeWorktree(m, cur); err != nil { // merged from this machine: its worktree and branch here
				return err
			}
		}
		lt, err := m.local(cur)
		if err != nil {
			return err
		}
		mr, err := land(m, st, actor, lt, favor, false)
		if err != nil {
			return err
		}
		res.Merge = *mr
		now := s.Now().UTC()
		t, err = st.UpdateTask(cur.ID, func(x *store.Task) error {
			if x.Status == store.TaskActive {
				x.EndedAt = &now
			}
			x.Status, x.Merge, x.Merged = store.TaskDone, nil, mr.Hash
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	settleRequest(s, st, actor, was, "merged by "+actor.Name)
	res.Task = t
	mergeEvent(s, actor, t, &res.Merge)
	if was.State != store.MergeReview {
		// pm done had failed on the merge: the task is done only now.
		s.Notify(bus.Event{Kind: bus.EvTaskDone, Actor: actor.Name, TaskID: t.ID, Text: t.Description,
			Data: bus.TaskDone{Commit: t.Commit, Merged: t.Merged}})
	}
	res.Unblocked = finishDone(m, st, l, actor, t, was.State != store.MergeReview)
	return res, nil
}

// Reject is pm reject: the task's work goes back to its owner with why;
// the task is active again (a done task held for review counts against
// the active-task limit again), its worktree and branch kept, and its
// owner started again with the reason in its inbox.
func Reject(s *store.Store, l *agent.Launcher, actor store.Actor, taskID, why string) (*store.Task, error) {
	st := l.State
	why = strings.TrimSpace(why)
	if why == "" {
		return nil, errs.Usagef(`pm reject `+taskID+` "the tests fail: fix the parser first"`, "say why the work is rejected: the owner works on from it")
	}
	if _, err := st.Task(taskID); err != nil {
		return nil, err
	}
	var t *store.Task
	var was *store.TaskMerge
	err := st.WithTasks(func() error {
		cur, err := st.Task(taskID)
		if err != nil {
			return err
		}
		if err := mayDecide(s, st, actor, cur); err != nil {
			return err
		}
		if err := waiting(cur); err != nil {
			return err
		}
		if cur.Status == store.TaskDone {
			if err := checkActiveLimit(s, st); err != nil {
				return err
			}
		}
		was = cur.Merge
		t, err = st.UpdateTask(cur.ID, func(x *store.Task) error {
			x.Status, x.EndedAt, x.Rejected = store.TaskActive, nil, why
			x.Rejections++ // its owner acts on it at its next start (agent.RejectionUnseen)
			if x.Merge.State != store.MergeConflict {
				x.Merge = nil // a conflict stays: the next pm done merges the resolution
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	settleRequest(s, st, actor, was, "rejected by "+actor.Name+": "+why)
	text := "pm reject: " + why + ". Work on in " + t.WorkDir(s.ProjectDir()) + ", then run 'pm done' again."
	if t.Worktree != nil && t.Worktree.Remote != "" { // its owner may run on another machine
		text = "pm reject: " + why + ". Work on in your task's worktree (" + store.WorktreesDir + "/" + t.ID + " of the machine you run on), then run 'pm done' again."
	}
	if _, err := inbox.Send(s, st, inbox.Message{Kind: inbox.KindNotice, From: actor.Name, To: t.Owner, TaskID: t.ID, Text: text}); err != nil {
		s.Warnf("tell %s: %v", t.Owner, err)
	}
	// Started here when its host is here and not live. Otherwise the
	// rejection is not lost: an owner whose host still runs (finishing
	// after its pm done) is started again by the supervisor once it exits,
	// and one placed on a worker by that worker, woken by the event below
	// (agent.RejectionUnseen: the task was rejected since its last start).
	startErr := l.Start(t.Owner)
	s.Notify(bus.Event{Kind: bus.EvTaskRejected, Actor: actor.Name, TaskID: t.ID, Agent: t.Owner, Text: why})
	return t, startErr
}

// finishDone is what follows a task's merge: its worktree removed, its dependants unblocked and started, and, when it was not done
// before (notifyParent), its parent's owner told. It returns the tasks it
// made active.
func finishDone(m *machine, st state.State, l *agent.Launcher, actor store.Actor, t *store.Task, notifyParent bool) []string {
	s := m.s
	crashpoint.Hit("task.merge.marked")
	dropWorktree(m, t)
	repairRemoteBranches(m, st)
	unblocked := unblockDependants(s, st, l, actor, t)
	if notifyParent && t.ParentID != "" {
		tellParent(s, st, actor, t)
	}
	settle(s, l, actor)
	return unblocked
}

// mergeEvent announces a task's merge (before its task.done, so a follower
// that stops there has seen it).
func mergeEvent(s *store.Store, actor store.Actor, t *store.Task, mr *gitx.MergeResult) {
	if mr == nil || mr.Hash == "" {
		return
	}
	s.Notify(bus.Event{Kind: bus.EvMerge, Actor: actor.Name, TaskID: t.ID, Text: mr.Hash,
		Data: bus.Merge{Into: t.Worktree.Into, FastForward: mr.FastForward, Files: len(mr.Merged)}})
}

// Diff is what t's branch changed since it left the branch it merges into;
// for a task still working, with its worktree's uncommitted work in (what
// pm done would commit now, secrets left out the same way), reported by
// working. A task whose code goes through a remote is compared with the
// remote's branch, its worktree made here when this machine has none.
func Diff(s *store.Store, t *store.Task) (base string, files []gitx.FileDiff, working bool, err error) {
	m := here(s)
	lt, err := m.local(t)
	if err != nil {
		return "", nil, false, err
	}
	w := *lt.Worktree
	if w.Remote != "" {
		if err := makeWorktree(m, t); err != nil {
			return "", nil, false, err
		}
		// The branch it merges into as the remote has it (a parent's
		// not pushed yet: its start).
		into, err := remoteCopy(m, lt, w.Into, w.Base)
		if err != nil {
			return "", nil, false, err
		}
		if into != "" {
			w.Into = into
		}
		if !t.Live() {
			// Its work is on the remote, wherever it was done: this
			// machine's branch of it may be the one made with the task.
			branch, err := remoteCopy(m, lt, w.Branch, "")
			if err != nil {
				return "", nil, false, err
			}
			if branch != "" {
				w.Branch = branch
			}
		}
	}
	if !t.Live() {
		base, files, err = gitx.BranchDiff(*lt.Repo, w.Branch, w.Into)
		return base, files, false, err
	}
	base, files, err = gitx.WorkDiff(*lt.Repo, w, stateRel(s, lt), gitx.Options{Exclude: s.Config().Commit.Exclude})
	return base, files, true, err
}
