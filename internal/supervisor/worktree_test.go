package supervisor

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// A pm done killed after it marked its task done, before it removed the
// task's worktree (crash point task.merge.marked; kill -9 stress seed 28,
// trial 170, kind stray-worktree): the owner then leaves, nothing is live,
// and the supervisor leaves. Nothing else runs Settle in a supervised
// project, so the worktree stayed until the next pm task. The supervisor's
// way out removes the worktrees no task wants.
func TestLeavingRemovesADoneTasksWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := newRig(t, Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour})
	dir := r.s.ProjectDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	tk, err := task.Create(r.s, r.l, store.Human, task.Spec{Description: "work in a worktree", Runtime: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if tk.Worktree == nil {
		t.Fatal("the task has no worktree")
	}
	if _, err := os.Stat(tk.Worktree.Path); err != nil {
		t.Fatalf("the task's worktree: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.sv.Run(ctx) }()
	waitKnown(t, r.sv, tk.Owner)
	// pm done killed at task.merge.marked: done on record, worktree kept.
	if _, err := r.s.UpdateTask(tk.ID, func(x *store.Task) error { x.Status = store.TaskDone; return nil }); err != nil {
		t.Fatal(err)
	}
	owner := r.agent(t, tk.Owner)
	r.record(t, owner.Name, 0)
	r.fake.Exit(owner.Handle, 0)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tk.Worktree.Path); !os.IsNotExist(err) {
		t.Fatalf("the done task's worktree is still there after the supervisor left (stat: %v)", err)
	}
}
