package gitx

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// WorkDiff shows a working task's uncommitted work against where its
// branch started, as pm done would commit it (secrets and the state
// directory left out), and changes nothing: no commit, the worktree's
// index, HEAD and status as they were, no lock left.
func TestWorkDiff(t *testing.T) {
	dir, p := newProject(t, map[string]string{"a.txt": "a\n", "gone.txt": "bye\n"})
	w := addTask(t, dir, p, "tk-aaaaaa", "")
	write(t, w.Path, "a.txt", "a\nmore\n")
	write(t, w.Path, "new/b.txt", "b\n")
	write(t, w.Path, ".env", "KEY=secret\n")
	write(t, w.Path, ".plasmodium/x.json", "{}\n")
	must(t, os.Remove(filepath.Join(w.Path, "gone.txt")))
	// The user's own uncommitted work in the checkout is not the task's.
	write(t, dir, "mine.txt", "the user's\n")
	head := run(t, w.Path, "rev-parse", "HEAD")
	status := run(t, w.Path, "status", "--porcelain", "--untracked-files=all")

	base, files, err := WorkDiff(p, w, ".plasmodium", Options{Exclude: []string{".env*"}})
	must(t, err)
	if base != w.Base {
		t.Fatalf("base %s, want the branch's start %s", base, w.Base)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Status+" "+f.Path)
	}
	if want := []string{"modified a.txt", "deleted gone.txt", "added new/b.txt"}; !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if files[0].Added != 1 || files[0].Deleted != 0 || files[0].Patch == "" {
		t.Fatalf("a.txt: %+v", files[0])
	}
	if h := run(t, w.Path, "rev-parse", "HEAD"); h != head {
		t.Fatalf("HEAD moved: %s → %s", head, h)
	}
	if s := run(t, w.Path, "status", "--porcelain", "--untracked-files=all"); s != status {
		t.Fatalf("status changed:\n%s\nwas:\n%s", s, status)
	}
	for _, lock := range []string{"index.lock"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", "worktrees", "tk-aaaaaa", lock)); !os.IsNotExist(err) {
			t.Fatalf("%s left: %v", lock, err)
		}
	}
	checkRepo(t, dir)

	// Committed on the branch since, and more work on top: both show.
	_, err = CommitPinned(w.Path, mustPin(t, p, w), ".plasmodium", "part one", testNow, Options{Exclude: []string{".env*"}})
	must(t, err)
	write(t, w.Path, "c.txt", "c\n")
	_, files, err = WorkDiff(p, w, ".plasmodium", Options{Exclude: []string{".env*"}})
	must(t, err)
	got = got[:0]
	for _, f := range files {
		got = append(got, f.Status+" "+f.Path)
	}
	if want := []string{"modified a.txt", "added c.txt", "deleted gone.txt", "added new/b.txt"}; !slices.Equal(got, want) {
		t.Fatalf("after a commit: files %v, want %v", got, want)
	}
}

func mustPin(t *testing.T, p Pin, w Worktree) *Pin {
	t.Helper()
	wp, err := WorktreePin(p, w)
	must(t, err)
	return &wp
}
