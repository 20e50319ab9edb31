package task

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/store"
)

// git runs the git binary for a test's or a benchmark's setup.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// When another machine moves the remote's main between pm's fetch and its
// push, the compare-and-set refuses the push; pm fetches, merges again and
// pushes: both machines' work is on main, none lost.
func TestMergeRemoteRetriesWhenOvertaken(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	bare := filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	git(t, root, "clone", "-q", bare, "seed")
	seed := filepath.Join(root, "seed")
	os.WriteFile(filepath.Join(seed, "README"), []byte("one\n"), 0o644)
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-qm", "initial")
	git(t, seed, "push", "-q", "origin", "HEAD:refs/heads/main")
	base := git(t, seed, "rev-parse", "HEAD")
	git(t, root, "clone", "-q", bare, "clone")
	clone := filepath.Join(root, "clone")

	sroot, _, err := store.Init(clone, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(sroot)
	if err != nil {
		t.Fatal(err)
	}
	p, err := gitx.Locate(clone)
	if err != nil {
		t.Fatal(err)
	}
	lt := &store.Task{ID: "tk-a1b2c3", Description: "the task", Repo: &p}
	lt.Worktree = &gitx.Worktree{Path: filepath.Join(p.WorkTree, WorktreesDir, lt.ID), Branch: gitx.BranchPrefix + lt.ID,
		Base: base, Into: "refs/heads/main", Remote: "origin"}
	if err := localBranch(here(s), lt); err != nil {
		t.Fatal(err)
	}
	if err := gitx.AddWorktree(p, *lt.Worktree); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(lt.Worktree.Path, "task.txt"), []byte("the task's\n"), 0o644)
	if res, err := commitWork(s, lt); err != nil || res.Hash == "" {
		t.Fatalf("commit: %+v, %v", res, err)
	}

	// The other machine pushes to main once, right before pm's first push.
	pushes := 0
	pushing = func(ref string) {
		pushes++
		if pushes == 1 {
			os.WriteFile(filepath.Join(seed, "other.txt"), []byte("the other machine's\n"), 0o644)
			git(t, seed, "add", "-A")
			git(t, seed, "commit", "-qm", "other machine")
			git(t, seed, "push", "-q", "origin", "HEAD:refs/heads/main")
		}
	}
	t.Cleanup(func() { pushing = nil })
	mr, _, err := mergeRemote(here(s), lt, gitx.FavorNone)
	if err != nil || len(mr.Conflicts) > 0 {
		t.Fatalf("mergeRemote = %+v, %v", mr, err)
	}
	if pushes != 2 {
		t.Fatalf("%d pushes to main, want 2 (one refused, one after the fetch)", pushes)
	}
	if got := git(t, root, "--git-dir="+bare, "rev-parse", "main"); got != mr.Hash {
		t.Fatalf("remote main %s, merge %s", got, mr.Hash)
	}
	files := git(t, root, "--git-dir="+bare, "ls-tree", "-r", "--name-only", "main")
	for _, f := range []string{"task.txt", "other.txt", "README"} {
		if !strings.Contains(files, f) {
			t.Errorf("remote main lacks %s: %s", f, files)
		}
	}
	if got := git(t, root, "--git-dir="+bare, "rev-parse", "refs/heads/pm/"+lt.ID); got == "" {
		t.Error("the task's branch was not pushed")
	}
	// The clone's own main and checkout were not written.
	if got := git(t, clone, "rev-parse", "main"); got != base {
		t.Errorf("the clone's main moved to %s", got)
	}
	if _, err := os.Stat(filepath.Join(clone, "task.txt")); err == nil {
		t.Error("the clone's checkout was written")
	}
}

// Settle locates this machine's checkout once, not once per task whose
// code goes through a remote (it did three times per task).
func TestSettleLocatesTheCheckoutOnce(t *testing.T) {
	s, l := remoteTasks(t, 50)
	calls := 0
	locate = func(dir string) (gitx.Pin, error) { calls++; return gitx.Locate(dir) }
	t.Cleanup(func() { locate = gitx.Locate })
	if _, err := Settle(s, l, store.Human); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("Settle located the checkout %d times for 50 tasks, want 1", calls)
	}
}

// The Try line of a merge that waits names the worktree as its reader
// finds it: on this machine, this machine's path of a remote task's
// worktree (the recorded one is the machine's that made it); in a request
// read anywhere, its place in the reader's project directory.
func TestWaitsTryNamesTheReadersWorktree(t *testing.T) {
	s, _ := remoteTasks(t, 0)
	tk := &store.Task{ID: "tk-a1b2c3", Description: "d"}
	tk.Worktree = &gitx.Worktree{Path: "/another/machine/.pm-worktrees/tk-a1b2c3", Branch: gitx.BranchPrefix + "tk-a1b2c3", Into: "refs/heads/main", Remote: "origin"}
	m := &store.TaskMerge{State: store.MergeConflict, Paths: []string{"a.txt"}}
	for _, try := range []string{mergeHealth(s, &store.Task{ID: tk.ID, TaskGit: store.TaskGit{Worktree: tk.Worktree, Merge: m}}).Next, waitsTry(tk, m, worktreeAnywhere(tk))} {
		if strings.Contains(try, "/another/machine") {
			t.Errorf("Try names another machine's path: %s", try)
		}
	}
	if h := mergeHealth(s, &store.Task{ID: tk.ID, TaskGit: store.TaskGit{Worktree: tk.Worktree, Merge: m}}); !strings.Contains(h.Next, filepath.Join(realPath(s.ProjectDir()), WorktreesDir, tk.ID)) {
		t.Errorf("health's Try does not name this machine's worktree: %s", h.Next)
	}
}
