package gitx

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// doneTask commits w's work on its branch, as pm done does.
func doneTask(t *testing.T, p Pin, w Worktree, msg string) Result {
	t.Helper()
	wp, err := WorktreePin(p, w)
	must(t, err)
	res, err := CommitPinned(w.Path, &wp, stateDir, msg, testNow, Options{})
	must(t, err)
	return res
}

func mergeTask(t *testing.T, p Pin, w Worktree, favor Favor) MergeResult {
	t.Helper()
	res, err := Merge(p, w.Branch, w.Into, stateDir, "merge "+filepath.Base(w.Path), testNow, favor)
	must(t, err)
	return res
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	must(t, err)
	return string(b)
}

const text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n"

func TestMergeParallelTasks(t *testing.T) {
	dir, p := newProject(t, map[string]string{"a.txt": text, "b.txt": text, "shared.txt": text})
	w1 := addTask(t, dir, p, "tk-111111", "")
	w2 := addTask(t, dir, p, "tk-222222", "")
	write(t, w1.Path, "a.txt", "one\n")
	write(t, w1.Path, "new1.txt", "n1\n")
	write(t, w1.Path, "shared.txt", strings.Replace(text, "2\n", "two\n", 1))
	write(t, w2.Path, "b.txt", "bee\n")
	write(t, w2.Path, "shared.txt", strings.Replace(text, "8\n", "eight\n", 1))
	c1, c2 := doneTask(t, p, w1, "t1"), doneTask(t, p, w2, "t2")
	if !slices.Equal(c1.Committed, []string{"a.txt", "new1.txt", "shared.txt"}) || !slices.Equal(c2.Committed, []string{"b.txt", "shared.txt"}) {
		t.Fatalf("commits hold %v and %v", c1.Committed, c2.Committed)
	}
	m1 := mergeTask(t, p, w1, FavorNone)
	if !m1.FastForward || m1.CheckedOut != dir || !slices.Equal(m1.Merged, []string{"a.txt", "new1.txt", "shared.txt"}) {
		t.Fatalf("first merge: %+v", m1)
	}
	m2 := mergeTask(t, p, w2, FavorNone)
	if m2.FastForward || len(m2.Conflicts) > 0 || !slices.Equal(m2.Merged, []string{"b.txt", "shared.txt"}) {
		t.Fatalf("second merge: %+v", m2)
	}
	want := strings.Replace(strings.Replace(text, "2\n", "two\n", 1), "8\n", "eight\n", 1)
	if got := readFile(t, dir, "shared.txt"); got != want {
		t.Fatalf("shared.txt = %q", got)
	}
	if got := pending(t, dir); len(got) > 0 {
		t.Fatalf("git status after the merges: %v", got)
	}
	if got := run(t, dir, "log", "--format=%P", "-1"); len(strings.Fields(got)) != 2 {
		t.Fatalf("not a merge commit: parents %q", got)
	}
	checkRepo(t, dir)
	// Merged again: nothing to do.
	if m := mergeTask(t, p, w2, FavorNone); !m.UpToDate {
		t.Fatalf("again: %+v", m)
	}
}

func TestMergeConflict(t *testing.T) {
	dir, p := newProject(t, map[string]string{"f.txt": text})
	w1 := addTask(t, dir, p, "tk-111111", "")
	w2 := addTask(t, dir, p, "tk-222222", "")
	write(t, w1.Path, "f.txt", strings.Replace(text, "5\n", "five\n", 1))
	write(t, w2.Path, "f.txt", strings.Replace(text, "5\n", "FIVE\n", 1))
	doneTask(t, p, w1, "t1")
	doneTask(t, p, w2, "t2")
	mergeTask(t, p, w1, FavorNone)
	head := run(t, dir, "rev-parse", "HEAD")
	m := mergeTask(t, p, w2, FavorNone)
	if !slices.Equal(m.Conflicts, []string{"f.txt"}) || m.Hash != "" {
		t.Fatalf("conflict: %+v", m)
	}
	if run(t, dir, "rev-parse", "HEAD") != head || !strings.Contains(readFile(t, dir, "f.txt"), "five") {
		t.Fatal("a conflicting merge changed the checkout")
	}
	// The task's work is still on its branch and in its worktree.
	if !strings.Contains(run(t, dir, "show", w2.Branch+":f.txt"), "FIVE") || !strings.Contains(readFile(t, w2.Path, "f.txt"), "FIVE") {
		t.Fatal("the task's work was lost")
	}
	m = mergeTask(t, p, w2, FavorTheirs)
	if len(m.Conflicts) > 0 || !strings.Contains(readFile(t, dir, "f.txt"), "FIVE") {
		t.Fatalf("--theirs: %+v", m)
	}
	if got := pending(t, dir); len(got) > 0 {
		t.Fatalf("git status: %v", got)
	}
	checkRepo(t, dir)
}

func TestMergeKeepsUserChanges(t *testing.T) {
	dir, p := newProject(t, map[string]string{"index.html": text, "app.js": text})
	w := addTask(t, dir, p, "tk-111111", "")
	write(t, w.Path, "app.js", "task\n")
	doneTask(t, p, w, "t")
	// The user's own edits: another file, and an untracked note.
	write(t, dir, "index.html", "mine\n")
	write(t, dir, "NOTES.md", "my notes\n")
	m := mergeTask(t, p, w, FavorNone)
	if !slices.Equal(m.Merged, []string{"app.js"}) || len(m.Dirty) > 0 {
		t.Fatalf("%+v", m)
	}
	if readFile(t, dir, "index.html") != "mine\n" || readFile(t, dir, "NOTES.md") != "my notes\n" || readFile(t, dir, "app.js") != "task\n" {
		t.Fatal("files after the merge")
	}
	if got := pending(t, dir); !slices.Equal(got, []string{" M index.html", "?? NOTES.md"}) {
		t.Fatalf("git status: %v", got)
	}
	if got := tree(t, dir); !slices.Contains(got, "100644 app.js") || slices.Contains(got, "100644 NOTES.md") {
		t.Fatalf("HEAD: %v", got)
	}

	// A task changing the file the user is editing waits.
	w2 := addTask(t, dir, p, "tk-222222", "")
	write(t, w2.Path, "index.html", "task's\n")
	doneTask(t, p, w2, "t2")
	head := run(t, dir, "rev-parse", "HEAD")
	m = mergeTask(t, p, w2, FavorNone)
	if !slices.Equal(m.Dirty, []string{"index.html"}) || m.Hash != "" {
		t.Fatalf("dirty: %+v", m)
	}
	if readFile(t, dir, "index.html") != "mine\n" || run(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("the user's edit was touched")
	}
	// An untracked file of the user's where the task adds one: waits too.
	w3 := addTask(t, dir, p, "tk-333333", "")
	write(t, w3.Path, "NOTES.md", "task notes\n")
	doneTask(t, p, w3, "t3")
	if m = mergeTask(t, p, w3, FavorNone); !slices.Equal(m.Dirty, []string{"NOTES.md"}) {
		t.Fatalf("untracked: %+v", m)
	}
	checkRepo(t, dir)
}

func TestMergeSubtaskIntoParent(t *testing.T) {
	dir, p := newProject(t, map[string]string{"a.txt": text})
	parent := addTask(t, dir, p, "tk-aaaaaa", "")
	child := addTask(t, dir, p, "tk-bbbbbb", parent.Branch)
	if child.Into != parent.Branch {
		t.Fatalf("child into %s", child.Into)
	}
	write(t, parent.Path, "parent-wip.txt", "wip\n") // the parent's uncommitted work
	write(t, child.Path, "child.txt", "from the child\n")
	doneTask(t, p, child, "child")
	m := mergeTask(t, p, child, FavorNone)
	if m.CheckedOut != parent.Path || !m.FastForward {
		t.Fatalf("%+v", m)
	}
	if readFile(t, parent.Path, "child.txt") != "from the child\n" || readFile(t, parent.Path, "parent-wip.txt") != "wip\n" {
		t.Fatal("parent's worktree after the child's merge")
	}
	if got := run(t, dir, "rev-parse", "main"); got != parent.Base {
		t.Fatal("main moved before the parent's pm done")
	}
	res := doneTask(t, p, parent, "parent")
	if !slices.Equal(res.Committed, []string{"parent-wip.txt"}) {
		t.Fatalf("parent commit: %v", res.Committed)
	}
	mergeTask(t, p, parent, FavorNone)
	if readFile(t, dir, "child.txt") != "from the child\n" {
		t.Fatal("child's work did not reach main")
	}
	checkRepo(t, dir)
}

func TestMergeConflictResolvedInWorktree(t *testing.T) {
	dir, p := newProject(t, map[string]string{"f.txt": text, "g.txt": text})
	w1 := addTask(t, dir, p, "tk-111111", "")
	w2 := addTask(t, dir, p, "tk-222222", "")
	write(t, w1.Path, "f.txt", strings.Replace(text, "5\n", "five\n", 1))
	write(t, w1.Path, "g.txt", "g from one\n")
	write(t, w2.Path, "f.txt", strings.Replace(text, "5\n", "FIVE\n", 1))
	doneTask(t, p, w1, "t1")
	doneTask(t, p, w2, "t2")
	mergeTask(t, p, w1, FavorNone)
	onto := run(t, dir, "rev-parse", "main")
	if m := mergeTask(t, p, w2, FavorNone); len(m.Conflicts) != 1 {
		t.Fatalf("%+v", m)
	}
	conflicts, err := MarkConflicts(p, w2, onto, stateDir)
	must(t, err)
	if !slices.Equal(conflicts, []string{"f.txt"}) {
		t.Fatalf("conflicts %v", conflicts)
	}
	got := readFile(t, w2.Path, "f.txt")
	want := strings.Replace(text, "5\n", "<<<<<<< pm/tk-222222\nFIVE\n=======\nfive\n>>>>>>> main\n", 1)
	if got != want {
		t.Fatalf("f.txt with markers:\n%s", got)
	}
	if readFile(t, w2.Path, "g.txt") != "g from one\n" {
		t.Fatal("the clean part of the merge is not in the worktree")
	}
	// Resolved by hand, committed with main as the second parent.
	write(t, w2.Path, "f.txt", strings.Replace(text, "5\n", "Five\n", 1))
	wp, err := WorktreePin(p, w2)
	must(t, err)
	_, err = CommitPinned(w2.Path, &wp, stateDir, "t2 resolved", testNow, Options{Merging: onto})
	must(t, err)
	m := mergeTask(t, p, w2, FavorNone)
	if !m.FastForward {
		t.Fatalf("after the resolution: %+v", m)
	}
	if readFile(t, dir, "f.txt") != strings.Replace(text, "5\n", "Five\n", 1) || readFile(t, dir, "g.txt") != "g from one\n" {
		t.Fatal("main after the resolution")
	}
	if got := pending(t, dir); len(got) > 0 {
		t.Fatalf("git status: %v", got)
	}
	checkRepo(t, dir)
}

// --theirs and --ours settle only the conflicting lines, as git's -X does:
// what the other side changed elsewhere in the same file is kept.
func TestMergeFavorIsPerHunk(t *testing.T) {
	for _, tc := range []struct {
		favor Favor
		want  string
	}{
		{FavorTheirs, strings.NewReplacer("1\n", "ONE\n", "5\n", "FIVE\n", "9\n", "NINE\n").Replace(text)},
		{FavorOurs, strings.NewReplacer("1\n", "ONE\n", "5\n", "five\n", "9\n", "NINE\n").Replace(text)},
	} {
		t.Run(map[Favor]string{FavorTheirs: "theirs", FavorOurs: "ours"}[tc.favor], func(t *testing.T) {
			dir, p := newProject(t, map[string]string{"f.txt": text})
			w1 := addTask(t, dir, p, "tk-111111", "")
			w2 := addTask(t, dir, p, "tk-222222", "")
			// The branch merged into changes line 1 and line 5; the task
			// changes line 5 (the conflict) and line 9.
			write(t, w1.Path, "f.txt", strings.NewReplacer("1\n", "ONE\n", "5\n", "five\n").Replace(text))
			write(t, w2.Path, "f.txt", strings.NewReplacer("5\n", "FIVE\n", "9\n", "NINE\n").Replace(text))
			doneTask(t, p, w1, "t1")
			doneTask(t, p, w2, "t2")
			mergeTask(t, p, w1, FavorNone)
			if m := mergeTask(t, p, w2, tc.favor); len(m.Conflicts) > 0 {
				t.Fatalf("merge: %+v", m)
			}
			if got := readFile(t, dir, "f.txt"); got != tc.want {
				t.Fatalf("f.txt = %q, want %q", got, tc.want)
			}
			checkRepo(t, dir)
		})
	}
}
