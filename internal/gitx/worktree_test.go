package gitx

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// newProject is a repository on main with files (path → content) committed
// by the git binary, and its Pin.
func newProject(t *testing.T, files map[string]string) (string, Pin) {
	t.Helper()
	needGit(t)
	isolate(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	initRepo(t, dir)
	for p, c := range files {
		write(t, dir, p, c)
	}
	if len(files) > 0 {
		commitAll(t, dir)
	}
	p, err := Locate(dir)
	must(t, err)
	return dir, p
}

// addTask makes the worktree of task id from into ("" HEAD's branch).
func addTask(t *testing.T, dir string, p Pin, id, into string) Worktree {
	t.Helper()
	branch, tip, err := StartPoint(p, into)
	must(t, err)
	w := Worktree{Path: filepath.Join(dir, ".pm-worktrees", id), Branch: BranchPrefix + id, Base: tip, Into: branch}
	must(t, AddWorktree(p, w))
	return w
}

// checkRepo runs git fsck and lists the worktrees git sees.
func checkRepo(t *testing.T, dir string) []string {
	t.Helper()
	run(t, dir, "fsck", "--no-progress", "--strict")
	var out []string
	for _, l := range lines(run(t, dir, "worktree", "list", "--porcelain")) {
		if s, ok := strings.CutPrefix(l, "worktree "); ok {
			out = append(out, s)
		}
		if l == "prunable" || strings.HasPrefix(l, "prunable ") || strings.HasPrefix(l, "locked") {
			t.Errorf("git worktree list: %s", l)
		}
	}
	return out
}

func TestAddWorktree(t *testing.T) {
	dir, p := newProject(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "x.sh": "#!/bin/sh\n"})
	must(t, os.Chmod(filepath.Join(dir, "x.sh"), 0o755))
	must(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
	commitAll(t, dir)
	w := addTask(t, dir, p, "tk-aaaaaa", "")
	if w.Into != "refs/heads/main" || w.Base != run(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("start point: %+v", w)
	}
	if got := checkRepo(t, dir); !slices.Equal(got, []string{dir, w.Path}) {
		t.Fatalf("git worktree list: %v", got)
	}
	if got := run(t, w.Path, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Fatalf("git status in the worktree: %q", got)
	}
	if got := run(t, dir, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Fatalf("git status in the checkout: %q", got)
	}
	if got := run(t, w.Path, "symbolic-ref", "HEAD"); got != "refs/heads/pm/tk-aaaaaa" {
		t.Fatalf("worktree HEAD: %s", got)
	}
	if got := run(t, w.Path, "ls-files", "-s", "--", "x.sh"); !strings.HasPrefix(got, "100755") {
		t.Fatalf("x.sh: %s", got)
	}
	// Again: a complete worktree is left as it is.
	write(t, w.Path, "new.txt", "work\n")
	must(t, AddWorktree(p, w))
	if _, err := os.Stat(filepath.Join(w.Path, "new.txt")); err != nil {
		t.Fatal("a second AddWorktree remade a complete worktree")
	}
	// A commit there lands on the task's branch only.
	wp, err := WorktreePin(p, w)
	must(t, err)
	res, err := CommitPinned(w.Path, &wp, stateDir, "task work", testNow, Options{})
	must(t, err)
	if !slices.Equal(res.Committed, []string{"new.txt"}) {
		t.Fatalf("committed %v", res.Committed)
	}
	if got := run(t, dir, "rev-parse", "pm/tk-aaaaaa"); got != res.Hash {
		t.Fatalf("branch at %s, commit %s", got, res.Hash)
	}
	if got := run(t, dir, "rev-parse", "main"); got != w.Base {
		t.Fatal("main moved")
	}
	checkRepo(t, dir)

	must(t, RemoveWorktree(p, w, false))
	if got := checkRepo(t, dir); !slices.Equal(got, []string{dir}) {
		t.Fatalf("after remove: %v", got)
	}
	if out, err := gitCmd(dir, "rev-parse", "--verify", "-q", "pm/tk-aaaaaa"); err == nil {
		t.Fatalf("branch left: %s", out)
	}
}

func TestAddWorktreeUnborn(t *testing.T) {
	dir, p := newProject(t, nil)
	w := addTask(t, dir, p, "tk-bbbbbb", "")
	if w.Base != "" || w.Into != "refs/heads/main" {
		t.Fatalf("%+v", w)
	}
	write(t, w.Path, "f.txt", "x\n")
	wp, err := WorktreePin(p, w)
	must(t, err)
	_, err = CommitPinned(w.Path, &wp, stateDir, "first", testNow, Options{})
	must(t, err)
	checkRepo(t, dir)
	if got := run(t, w.Path, "status", "--porcelain"); got != "" {
		t.Fatal(got)
	}
}

func TestAddWorktreeRefusesDetached(t *testing.T) {
	dir, p := newProject(t, map[string]string{"a": "a"})
	run(t, dir, "checkout", "-q", "--detach")
	if _, _, err := StartPoint(p, ""); err != ErrDetached {
		t.Fatalf("err = %v", err)
	}
}
