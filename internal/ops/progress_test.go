package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
	"github.com/plasmodium/pm/internal/watch"
)

// answerNext answers the next pending request as the human (woken by file
// events) and hands it over.
func answerNext(t *testing.T, s *store.Store, answer string) <-chan *store.Request {
	out := make(chan *store.Request, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var got *store.Request
		_ = os.MkdirAll(s.RequestsDir(), 0o755)
		_ = watch.Until(ctx, func() []string { return []string{s.RequestsDir()} }, func() (bool, error) {
			if rs, err := request.List(s, fsstate.New(s), false); err == nil && len(rs) > 0 {
				got = rs[0]
			}
			return got != nil, nil
		})
		if got != nil {
			_, _ = request.Answer(s, fsstate.New(s), store.Human, got.ID, answer)
		}
		out <- got
	}()
	return out
}

// Phases opened on the same progress mark (no file changed, no subtask
// done) count; the Kth in a row waits for the human: a denial refuses the
// phase (exit 3) with their words, a yes opens it and the count starts
// again, a changed file is progress.
func TestPhasesWithoutProgress(t *testing.T) {
	s := newStore(t)
	s.Config().Governance.Loop.Phases = 2
	tk := addTask(t, s, "tk-000001", store.TaskActive, 0)
	sess := &Session{Store: s, State: fsstate.New(s), Actor: agentActor(tk.Owner, tk.ID, "", "")}
	open := func(id string) error {
		mark, allowed, err := checkProgress(context.Background(), sess, tk)
		if err == nil {
			recordProgress(s, sess.State, tk, &store.Phase{ID: id}, mark, allowed)
		}
		return err
	}
	for _, id := range []string{"ph-000001", "ph-000002"} {
		if err := open(id); err != nil {
			t.Fatal(err)
		}
	}
	asked := answerNext(t, s, "write index.html first")
	err := open("ph-000003")
	rq := <-asked
	if !errs.Is(err, errs.Limit) || !strings.Contains(err.Error(), "loop: 2 phases closed without progress; the human says: write index.html first") {
		t.Fatalf("third phase: %v", err)
	}
	if rq.Kind != request.KindLoop || !strings.Contains(rq.Question, "after 2 phases of task tk-000001 closed with no file changed and no subtask done") {
		t.Fatalf("request %+v", rq)
	}
	asked = answerNext(t, s, "yes")
	if err := open("ph-000003"); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	<-asked
	if err := open("ph-000004"); err != nil { // 2nd of a new row
		t.Fatalf("after yes: %v", err)
	}
	if err := os.WriteFile(filepath.Join(s.ProjectDir(), "index.html"), []byte("<h1>hi</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := open("ph-000005"); err != nil { // a file changed: progress
		t.Fatalf("after a change: %v", err)
	}
	got, _ := s.PhasesProgress(tk.ID)
	if len(got) != 5 || !got[2].Allowed || got[4].Mark == got[3].Mark {
		t.Fatalf("progress %+v", got)
	}
	// "stop" refuses the phase and halts the agent through its host (an
	// exec agent's pm phase: Session.Halt).
	halted := ""
	sess.Halt = func(reason string) { halted = reason }
	if err := open("ph-000006"); err != nil {
		t.Fatal(err)
	}
	asked = answerNext(t, s, "stop")
	err = open("ph-000007")
	<-asked
	if !errs.Is(err, errs.Limit) || !strings.HasPrefix(halted, "stopped by the human (loop breaker): it opens another phase after 2 phases") {
		t.Fatalf("stop: %v; halted %q", err, halted)
	}
	// The human opening phases is never paused.
	human := &Session{Store: s, State: fsstate.New(s), Actor: store.Human}
	if _, _, err := checkProgress(context.Background(), human, tk); err != nil {
		t.Fatal(err)
	}
}

// The same pm phase run again (after a kill) finds its room: it is one
// phase, recorded once.
func TestPhaseProgressRecordedOnce(t *testing.T) {
	s := newStore(t)
	tk := addTask(t, s, "tk-000001", store.TaskActive, 0)
	ph := &store.Phase{ID: "ph-000001"}
	recordProgress(s, fsstate.New(s), tk, ph, "m", false)
	recordProgress(s, fsstate.New(s), tk, ph, "m", false)
	if got, _ := s.PhasesProgress(tk.ID); len(got) != 1 {
		t.Fatalf("progress %+v", got)
	}
}

// A task's progress is its own work: a change in its worktree moves its
// mark; a change in another task's worktree does not, nor does one in the
// user's checkout for a task with a worktree of its own.
func TestProgressMarkIsTheTasksWork(t *testing.T) {
	s := newStore(t)
	project, err := filepath.EvalSymlinks(s.ProjectDir())
	if err != nil {
		t.Fatal(err)
	}
	inTree := func(id string) *store.Task {
		tk := addTask(t, s, id, store.TaskActive, 0)
		tk.Repo = &gitx.Pin{WorkTree: project}
		tk.Worktree = &gitx.Worktree{Path: filepath.Join(project, task.WorktreesDir, id)}
		if err := os.MkdirAll(tk.Worktree.Path, 0o755); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	mine, other := inTree("tk-000001"), inTree("tk-000002")
	plain := addTask(t, s, "tk-000003", store.TaskActive, 0) // no worktree: the checkout
	write := func(dir, name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		change func()
		moved  map[*store.Task]bool
	}{
		{"its own worktree", func() { write(mine.Worktree.Path, "a.txt") }, map[*store.Task]bool{mine: true}},
		{"another task's worktree", func() { write(other.Worktree.Path, "b.txt") }, map[*store.Task]bool{other: true}},
		{"the user's checkout", func() { write(project, "c.txt") }, map[*store.Task]bool{plain: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := map[*store.Task]string{}
			for _, tk := range []*store.Task{mine, other, plain} {
				before[tk] = progressMark(s, fsstate.New(s), tk)
			}
			tc.change()
			for _, tk := range []*store.Task{mine, other, plain} {
				if moved := progressMark(s, fsstate.New(s), tk) != before[tk]; moved != tc.moved[tk] {
					t.Errorf("%s: mark moved %v, want %v", tk.ID, moved, tc.moved[tk])
				}
			}
		})
	}
}
