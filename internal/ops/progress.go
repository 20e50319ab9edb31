package ops

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// The loop breaker for phases: an owner opening phase after phase while
// nothing happens. Each phase an agent opens is recorded with the task's
// progress mark at that moment (tasks/ID/progress.jsonl): a fingerprint of
// the project's files and the count of its done subtasks. When the last
// governance.loop.phases phases all opened on the mark the task has now,
// they all closed with no file changed and no subtask done, and the next
// one waits for the human (LoopPause). A "yes" starts the count again.

// maxProgressFiles bounds the walk: a larger project has no mark (it is
// never taken for a loop).
const maxProgressFiles = 100_000

// progressMark is the task's progress now: the files where its agents
// work (its worktree, or the project for a task without one; path, size,
// modification time, mode; not .git, the state directory nor other tasks'
// worktrees) and its done subtasks. "" when it cannot be known.
func progressMark(s *store.Store, st state.State, t *store.Task) string {
	h := sha256.New()
	n := 0
	errBig := errors.New("too many files")
	others := filepath.Join(s.ProjectDir(), task.WorktreesDir)
	err := filepath.WalkDir(t.WorkDir(s.ProjectDir()), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: the same next time
		}
		if d.IsDir() && (d.Name() == ".git" || path == s.Root || path == others) {
			return filepath.SkipDir
		}
		if n++; n > maxProgressFiles {
			return errBig
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%o\n", path, info.Size(), info.ModTime().UnixNano(), info.Mode())
		return nil
	})
	if err != nil {
		return ""
	}
	done := 0
	for _, id := range t.Children {
		if c, err := st.Task(id); err == nil && c.Status == store.TaskDone {
			done++
		}
	}
	return fmt.Sprintf("%x/%d", h.Sum(nil)[:12], done)
}

// checkProgress is asked before an agent opens a phase on t: it returns
// the mark to record with the phase, whether the human allowed it past
// the breaker, or the refusal.
func checkProgress(ctx context.Context, sess *Session, t *store.Task) (mark string, allowed bool, err error) {
	k := sess.Store.Config().Governance.Loop.Phases
	if sess.Actor.IsHuman() || k <= 0 {
		return "", false, nil
	}
	mark = progressMark(sess.Store, sess.State, t)
	if mark == "" {
		return "", false, nil
	}
	entries, _ := sess.State.PhasesProgress(t.ID)
	row := 0
	for i := len(entries) - 1; i >= 0 && entries[i].Mark == mark; i-- {
		row++
		if entries[i].Allowed {
			break
		}
	}
	if row < k {
		return mark, false, nil
	}
	evidence := fmt.Sprintf("it opens another phase after %d phases of task %s closed with no file changed and no subtask done", row, t.ID)
	v, why, err := LoopPause(ctx, sess, evidence)
	switch {
	case err != nil:
		return "", false, err
	case v == request.Allow:
		return mark, true, nil
	case v == request.Stop:
		why = "stop opening phases; the human will look at the task"
	}
	return "", false, errs.Limitf("change something, or do what the human says, before another phase",
		"loop: %d phases closed without progress; the human says: %s", row, why)
}

// recordProgress notes the phase an agent opened with its mark.
func recordProgress(s *store.Store, st state.State, t *store.Task, ph *store.Phase, mark string, allowed bool) {
	if mark == "" || ph == nil {
		return
	}
	if err := st.AppendPhaseProgress(t.ID, store.PhaseProgress{Phase: ph.ID, Mark: mark, Allowed: allowed}); err != nil {
		s.Warnf("phase progress not recorded: %v", err)
	}
}
