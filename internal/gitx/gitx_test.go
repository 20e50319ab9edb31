package gitx

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
)

const stateDir = ".plasmodium"

var testNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 2*3600))

// isolate points the global git configuration at an empty temporary home so
// that neither Commit nor the git binary sees the developer's settings.
func isolate(t testing.TB) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return home
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not available")
	}
}

// gitCmd runs the git binary in dir with a fixed setup identity.
func gitCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Setup", "GIT_AUTHOR_EMAIL=setup@example.com",
		"GIT_COMMITTER_NAME=Setup", "GIT_COMMITTER_EMAIL=setup@example.com",
	)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// run runs the git binary in dir and returns its trimmed output.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitCmd(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimRight(out, "\n")
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t testing.TB, dir, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

func initRepo(t testing.TB, dir string) {
	t.Helper()
	run(t, dir, "init", "-q", "-b", "main")
}

// commitAll makes a setup commit with the git binary.
func commitAll(t testing.TB, dir string) {
	t.Helper()
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "setup")
}

func hasHEAD(dir string) bool {
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", "HEAD")
	cmd.Dir = dir
	return cmd.Run() == nil
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// tree lists HEAD as "mode path" lines.
func tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, l := range lines(run(t, dir, "ls-tree", "-r", "--full-tree", "HEAD")) {
		f := strings.Fields(l)
		out = append(out, f[0]+" "+l[strings.IndexByte(l, '\t')+1:])
	}
	return out
}

// pending lists what `git status` still reports, outside the state dir.
func pending(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, l := range lines(run(t, dir, "status", "--porcelain", "--untracked-files=all")) {
		if !strings.Contains(l, stateDir+"/") {
			out = append(out, l)
		}
	}
	return out
}

func TestCommit(t *testing.T) {
	needGit(t)
	type check func(t *testing.T, dir string, res Result)

	wantTree := func(want ...string) check {
		return func(t *testing.T, dir string, _ Result) {
			t.Helper()
			if got := tree(t, dir); !slices.Equal(got, want) {
				t.Errorf("HEAD tree:\n got %q\nwant %q", got, want)
			}
		}
	}
	wantCommits := func(n int) check {
		return func(t *testing.T, dir string, _ Result) {
			t.Helper()
			if got := run(t, dir, "rev-list", "--count", "HEAD"); got != strconv.Itoa(n) {
				t.Errorf("commits = %s, want %d", got, n)
			}
		}
	}

	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (sub string) // returns the dir passed to Commit, relative
		want  Result                                      // Hash is only checked for emptiness
		check []check
	}{
		{
			name: "first commit",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "a.txt", "a\n")
				write(t, dir, "sub/deeper/b.txt", "b\n")
				write(t, dir, "run.sh", "#!/bin/sh\n")
				os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
				if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
				return ""
			},
			want: Result{Hash: "x", Files: 4},
			check: []check{
				wantTree("100644 a.txt", "120000 link", "100755 run.sh", "100644 sub/deeper/b.txt"),
				wantCommits(1),
			},
		},
		{
			name: "first commit in a repo made by go-git",
			setup: func(t *testing.T, dir string) string {
				if _, err := git.PlainInit(dir, false); err != nil {
					t.Fatal(err)
				}
				write(t, dir, "x/y/z.txt", "z\n")
				return "x/y"
			},
			want:  Result{Hash: "x", Files: 1},
			check: []check{wantTree("100644 x/y/z.txt"), wantCommits(1)},
		},
		{
			name: "modify, add, delete, chmod, new subdirectory",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "keep.txt", "keep\n")
				write(t, dir, "mod.txt", "old\n")
				write(t, dir, "del.txt", "bye\n")
				write(t, dir, "tool", "#!/bin/sh\n")
				write(t, dir, "gone/dir/file.txt", "x\n")
				commitAll(t, dir)
				write(t, dir, "mod.txt", "new content\n")
				remove(t, dir, "del.txt")
				remove(t, dir, "gone")
				os.Chmod(filepath.Join(dir, "tool"), 0o755)
				write(t, dir, "new/deep/er/file.txt", "new\n")
				write(t, dir, "added.txt", "added\n")
				return ""
			},
			want: Result{Hash: "x", Files: 6},
			check: []check{
				wantTree("100644 added.txt", "100644 keep.txt", "100644 mod.txt",
					"100644 new/deep/er/file.txt", "100755 tool"),
				wantCommits(2),
				func(t *testing.T, dir string, _ Result) {
					if got := run(t, dir, "show", "HEAD:mod.txt"); got != "new content" {
						t.Errorf("mod.txt = %q", got)
					}
				},
			},
		},
		{
			name: "same size, mtime restored",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "f.txt", "aaaa\n")
				commitAll(t, dir)
				p := filepath.Join(dir, "f.txt")
				fi, _ := os.Stat(p)
				write(t, dir, "f.txt", "bbbb\n")
				os.Chtimes(p, fi.ModTime(), fi.ModTime())
				return ""
			},
			want: Result{Hash: "x", Files: 1},
			check: []check{func(t *testing.T, dir string, _ Result) {
				if got := run(t, dir, "show", "HEAD:f.txt"); got != "bbbb" {
					t.Errorf("f.txt = %q", got)
				}
			}},
		},
		{
			name: "type changes",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "f2d", "file\n")
				write(t, dir, "d2f/inner.txt", "inner\n")
				write(t, dir, "f2l", "file\n")
				commitAll(t, dir)
				remove(t, dir, "f2d")
				write(t, dir, "f2d/now.txt", "now a dir\n")
				remove(t, dir, "d2f")
				write(t, dir, "d2f", "now a file\n")
				remove(t, dir, "f2l")
				os.Symlink("f2d", filepath.Join(dir, "f2l"))
				return ""
			},
			want:  Result{Hash: "x", Files: 5},
			check: []check{wantTree("100644 d2f", "100644 f2d/now.txt", "120000 f2l")},
		},
		{
			name: "nothing changed",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "a.txt", "a\n")
				write(t, dir, "b/c.txt", "c\n")
				commitAll(t, dir)
				// touched but identical content is no change either
				later := time.Now().Add(time.Hour)
				os.Chtimes(filepath.Join(dir, "a.txt"), later, later)
				return ""
			},
			want:  Result{NoChanges: true},
			check: []check{wantCommits(1)},
		},
		{
			name: "empty repository",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, stateDir+"/tasks.jsonl", "{}\n")
				return ""
			},
			want: Result{NoChanges: true},
			check: []check{func(t *testing.T, dir string, _ Result) {
				if hasHEAD(dir) {
					t.Error("HEAD exists")
				}
			}},
		},
		{
			name: "state directory never committed",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "a.txt", "a\n")
				write(t, dir, stateDir+"/store.jsonl", "{}\n")
				write(t, dir, stateDir+"/sub/x", "x\n")
				// even if the user explicitly staged it
				run(t, dir, "add", stateDir+"/store.jsonl")
				return ""
			},
			want:  Result{Hash: "x", Files: 1},
			check: []check{wantTree("100644 a.txt")},
		},
		{
			name: "state directory committed earlier stays as it was",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "a.txt", "a\n")
				write(t, dir, stateDir+"/old", "v1\n")
				commitAll(t, dir)
				write(t, dir, stateDir+"/old", "v2\n")
				write(t, dir, stateDir+"/new", "new\n")
				write(t, dir, "a.txt", "a2\n")
				return ""
			},
			want: Result{Hash: "x", Files: 1},
			check: []check{
				wantTree("100644 .plasmodium/old", "100644 a.txt"),
				func(t *testing.T, dir string, _ Result) {
					if got := run(t, dir, "show", "HEAD:"+stateDir+"/old"); got != "v1" {
						t.Errorf("state file = %q, want the committed v1", got)
					}
				},
			},
		},
		{
			name: "only state directory changed",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "a.txt", "a\n")
				commitAll(t, dir)
				write(t, dir, stateDir+"/store.jsonl", "{}\n")
				return ""
			},
			want:  Result{NoChanges: true},
			check: []check{wantCommits(1)},
		},
		{
			name: "gitignore honored",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, ".gitignore", "*.log\nbuild/\n/top-only\n")
				write(t, dir, "sub/.gitignore", "local.txt\n!keep.log\n")
				write(t, dir, ".git/info/exclude", "excluded.txt\n")
				write(t, dir, "a.txt", "a\n")
				write(t, dir, "x.log", "log\n")
				write(t, dir, "build/out.bin", "bin\n")
				write(t, dir, "top-only", "t\n")
				write(t, dir, "sub/top-only", "t\n")
				write(t, dir, "sub/local.txt", "l\n")
				write(t, dir, "sub/keep.log", "k\n")
				write(t, dir, "sub/other.log", "o\n")
				write(t, dir, "excluded.txt", "e\n")
				return ""
			},
			want: Result{Hash: "x", Files: 5},
			check: []check{wantTree("100644 .gitignore", "100644 a.txt", "100644 sub/.gitignore",
				"100644 sub/keep.log", "100644 sub/top-only")},
		},
		{
			name: "tracked files in ignored places stay tracked",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "build/tracked.txt", "v1\n")
				write(t, dir, "forced.log", "v1\n")
				write(t, dir, "build/gone.txt", "bye\n")
				commitAll(t, dir)
				write(t, dir, ".gitignore", "build/\n*.log\n")
				write(t, dir, "build/tracked.txt", "v2\n")
				write(t, dir, "forced.log", "v2\n")
				write(t, dir, "build/untracked.txt", "u\n")
				remove(t, dir, "build/gone.txt")
				return ""
			},
			want:  Result{Hash: "x", Files: 4},
			check: []check{wantTree("100644 .gitignore", "100644 build/tracked.txt", "100644 forced.log")},
		},
		{
			name: "user staged changes are included",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "a.txt", "a\n")
				commitAll(t, dir)
				write(t, dir, "staged.txt", "v1\n")
				write(t, dir, "a.txt", "a staged\n")
				run(t, dir, "add", "staged.txt", "a.txt")
				write(t, dir, "staged.txt", "v2 edited after staging\n")
				return ""
			},
			want: Result{Hash: "x", Files: 2},
			check: []check{func(t *testing.T, dir string, _ Result) {
				if got := run(t, dir, "show", "HEAD:staged.txt"); got != "v2 edited after staging" {
					t.Errorf("staged.txt = %q", got)
				}
			}},
		},
		{
			name: "subdirectory commits the whole work tree",
			setup: func(t *testing.T, dir string) string {
				initRepo(t, dir)
				write(t, dir, "top.txt", "t\n")
				write(t, dir, "a/b/c.txt", "c\n")
				return "a/b"
			},
			want:  Result{Hash: "x", Files: 2},
			check: []check{wantTree("100644 a/b/c.txt", "100644 top.txt")},
		},
		{
			name: "not a repository",
			setup: func(t *testing.T, dir string) string {
				write(t, dir, "a.txt", "a\n")
				return ""
			},
			want: Result{NoRepo: true},
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			dir := t.TempDir()
			sub := tc.setup(t, dir)
			res, err := Commit(filepath.Join(dir, filepath.FromSlash(sub)), stateDir, "pm: test commit", testNow)
			if err != nil {
				t.Fatalf("Commit: %v", err)
			}
			if (res.Hash != "") != (tc.want.Hash != "") || res.NoRepo != tc.want.NoRepo ||
				res.NoChanges != tc.want.NoChanges || res.Files != tc.want.Files {
				t.Fatalf("Commit = %+v, want %+v (Hash only checked for emptiness)", res, tc.want)
			}
			for _, c := range tc.check {
				c(t, dir, res)
			}
			if tc.want.NoRepo {
				if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
					t.Error(".git created")
				}
				return
			}
			if res.Hash != "" {
				if got := run(t, dir, "rev-parse", "HEAD"); got != res.Hash {
					t.Errorf("HEAD = %s, want %s", got, res.Hash)
				}
				// Files agrees with git's own count of changed paths.
				n := len(lines(run(t, dir, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "HEAD")))
				if n != res.Files {
					t.Errorf("Files = %d, git diff-tree counts %d", res.Files, n)
				}
				if got := run(t, dir, "log", "-1", "--format=%s|%an|%ae|%cn|%ce|%ad", "--date=iso"); got != "pm: test commit|pm|pm@localhost|pm|pm@localhost|2030-01-02 03:04:05 +0200" {
					t.Errorf("git log = %q", got)
				}
				if !strings.Contains(run(t, dir, "reflog", "-1"), "pm: test commit") {
					t.Error("no reflog entry")
				}
				run(t, dir, "fsck", "--strict", "--no-progress")
			}
			// The work tree is clean afterwards, except for the state dir.
			if p := pending(t, dir); len(p) != 0 {
				t.Errorf("git status not clean after Commit:\n%s", strings.Join(p, "\n"))
			}
			if hasHEAD(dir) && slices.ContainsFunc(tree(t, dir), func(l string) bool {
				return strings.Contains(l, stateDir+"/") && !strings.HasSuffix(l, stateDir+"/old")
			}) {
				t.Error("state directory committed")
			}
			// A second call finds nothing more to commit.
			again, err := Commit(dir, stateDir, "again", testNow)
			if err != nil || !again.NoChanges || again.Hash != "" {
				t.Errorf("second Commit = %+v, %v; want NoChanges", again, err)
			}
		})
	}
}

func TestCommitAuthor(t *testing.T) {
	needGit(t)
	cases := []struct {
		name       string
		repo       string // repository config lines
		global     string // ~/.gitconfig
		xdg        string // $XDG_CONFIG_HOME/git/config
		wantAuthor string
	}{
		{name: "fallback", wantAuthor: "pm <pm@localhost>"},
		{name: "repo config", repo: "[user]\n\tname = Repo Ann\n\temail = ann@repo.test\n",
			global: "[user]\n\tname = Global Gil\n\temail = gil@global.test\n", wantAuthor: "Repo Ann <ann@repo.test>"},
		{name: "global config", global: "[user]\n\tname = Global Gil\n\temail = gil@global.test\n",
			xdg: "[user]\n\tname = Xdg Xi\n\temail = xi@xdg.test\n", wantAuthor: "Global Gil <gil@global.test>"},
		{name: "xdg config", xdg: "[user]\n\tname = Xdg Xi\n\temail = xi@xdg.test\n", wantAuthor: "Xdg Xi <xi@xdg.test>"},
		{name: "mixed per key", repo: "[user]\n\tname = Repo Ann\n", global: "[user]\n\temail = gil@global.test\n",
			wantAuthor: "Repo Ann <gil@global.test>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			dir := t.TempDir()
			initRepo(t, dir)
			if tc.repo != "" {
				f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(tc.repo)
				f.Close()
			}
			if tc.global != "" {
				write(t, home, ".gitconfig", tc.global)
			}
			if tc.xdg != "" {
				write(t, home, ".config/git/config", tc.xdg)
			}
			write(t, dir, "a.txt", "a\n")
			res, err := Commit(dir, stateDir, "author test", testNow)
			if err != nil || res.Hash == "" {
				t.Fatalf("Commit = %+v, %v", res, err)
			}
			if got := run(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>"); got != tc.wantAuthor+"|"+tc.wantAuthor {
				t.Errorf("author|committer = %q, want %q", got, tc.wantAuthor)
			}
		})
	}
}

func TestCommitSequence(t *testing.T) {
	// Repeated commits in quick succession (racy timestamps) see every change.
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	for i := range 5 {
		write(t, dir, "f.txt", strings.Repeat("x", 10)+strconv.Itoa(i%10)) // same size each time
		write(t, dir, "n"+strconv.Itoa(i)+".txt", "n")
		res, err := Commit(dir, stateDir, "step", testNow)
		if err != nil {
			t.Fatal(err)
		}
		const want = 2
		if res.Hash == "" || res.Files != want {
			t.Fatalf("step %d: %+v, want a commit of %d files", i, res, want)
		}
		if got := run(t, dir, "show", "HEAD:f.txt"); got != strings.Repeat("x", 10)+strconv.Itoa(i%10) {
			t.Fatalf("step %d: f.txt = %q", i, got)
		}
		if p := pending(t, dir); len(p) != 0 {
			t.Fatalf("step %d: not clean: %q", i, p)
		}
	}
}

func TestCommitLockedIndex(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, "a.txt", "a\n")
	write(t, dir, ".git/index.lock", "")
	if _, err := Commit(dir, stateDir, "locked", testNow); err == nil {
		t.Fatal("Commit succeeded with index.lock present")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err != nil {
		t.Error("foreign index.lock was removed")
	}
}

func TestCommitRejectsBadInput(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, "a.txt", "a\n")
	for _, tc := range []struct{ state, msg string }{
		{stateDir, "  \n\n"},
		{"../outside", "msg"},
		{"/abs", "msg"},
		{".", "msg"},
	} {
		if res, err := Commit(dir, tc.state, tc.msg, testNow); err == nil {
			t.Errorf("Commit(state=%q, msg=%q) = %+v, want error", tc.state, tc.msg, res)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Error("index.lock left behind")
	}
}

func TestCommitNestedRepositories(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	// A tracked submodule (gitlink) and an untracked embedded repository.
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	initRepo(t, sub)
	write(t, sub, "s.txt", "s1\n")
	commitAll(t, sub)
	write(t, dir, "top.txt", "top\n")
	commitAll(t, dir) // adds sub as a gitlink
	emb := filepath.Join(dir, "embedded")
	os.MkdirAll(emb, 0o755)
	initRepo(t, emb)
	write(t, emb, "e.txt", "e\n")
	commitAll(t, emb)

	write(t, sub, "s.txt", "s2\n")
	commitAll(t, sub)
	res, err := Commit(dir, stateDir, "bump", testNow)
	if err != nil || res.Files != 1 {
		t.Fatalf("Commit = %+v, %v; want the gitlink bump only", res, err)
	}
	if got, want := run(t, dir, "rev-parse", "HEAD:sub"), run(t, sub, "rev-parse", "HEAD"); got != want {
		t.Errorf("gitlink = %s, want %s", got, want)
	}
	if got := tree(t, dir); !slices.Equal(got, []string{"160000 sub", "100644 top.txt"}) {
		t.Errorf("tree = %q", got)
	}
}

func TestCommitLinkedWorktree(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, "a.txt", "a\n")
	commitAll(t, dir)
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, dir, "worktree", "add", "-q", "-b", "feature", wt)
	write(t, wt, "b.txt", "b\n")
	write(t, wt, stateDir+"/s", "s\n")
	res, err := Commit(wt, stateDir, "in worktree", testNow)
	if err != nil || res.Hash == "" || res.Files != 1 {
		t.Fatalf("Commit = %+v, %v", res, err)
	}
	if got := run(t, dir, "rev-parse", "feature"); got != res.Hash {
		t.Errorf("feature = %s, want %s", got, res.Hash)
	}
	if got := run(t, dir, "rev-parse", "main"); got == res.Hash {
		t.Error("main moved")
	}
	if p := pending(t, wt); len(p) != 0 {
		t.Errorf("worktree not clean: %q", p)
	}
	if p := pending(t, dir); len(p) != 0 {
		t.Errorf("main work tree disturbed: %q", p)
	}
}

func TestCommitRefusesUnmerged(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, "f.txt", "base\n")
	commitAll(t, dir)
	run(t, dir, "checkout", "-q", "-b", "other")
	write(t, dir, "f.txt", "other\n")
	commitAll(t, dir)
	run(t, dir, "checkout", "-q", "main")
	write(t, dir, "f.txt", "main\n")
	commitAll(t, dir)
	if _, err := gitCmd(dir, "merge", "-q", "other"); err == nil {
		t.Fatal("merge did not conflict")
	}
	if !strings.Contains(run(t, dir, "ls-files", "--unmerged"), "f.txt") {
		t.Fatal("no unmerged entries")
	}
	head := run(t, dir, "rev-parse", "HEAD")
	if res, err := Commit(dir, stateDir, "no", testNow); err == nil {
		t.Fatalf("Commit = %+v, want an error", res)
	}
	if got := run(t, dir, "rev-parse", "HEAD"); got != head {
		t.Error("HEAD moved")
	}
}

func TestCleanMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"subject", "subject\n"},
		{"\n\n subject  \n\n\n\nbody\t\n\n", " subject\n\nbody\n"},
		{"a\r\nb", "a\nb\n"},
		{" \n\t\n", ""},
	} {
		if got := cleanMessage(tc.in); got != tc.want {
			t.Errorf("cleanMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCommitMatchesGitAddAll applies rounds of random edits and checks after
// each Commit that `git add -A` finds nothing left to stage: the committed
// tree is exactly the one git itself would have committed.
func TestCommitMatchesGitAddAll(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, stateDir+"/.gitignore", "*\n") // so that git add -A agrees
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b.txt", "c.log", "d/e", "d/f.txt", "d/g/h", "i/j/k/l.txt", "m/n.log", "x"}
	ignores := []string{"", "*.log\n", "d/\n", "g\n!h\n", "/x\n"}
	for round := range 8 {
		for range 12 {
			n := names[rng.IntN(len(names))]
			p := filepath.Join(dir, filepath.FromSlash(n))
			switch rng.IntN(8) {
			case 0, 1, 2:
				os.RemoveAll(p) // may be a directory now
				write(t, dir, n, strconv.Itoa(rng.IntN(3)))
			case 3:
				os.RemoveAll(p)
			case 4:
				os.Chmod(p, os.FileMode(0o644|rng.IntN(2)*0o111))
			case 5:
				os.RemoveAll(p)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.Symlink(names[rng.IntN(len(names))], p)
			case 6:
				write(t, dir, ".gitignore", ignores[rng.IntN(len(ignores))])
			case 7:
				write(t, dir, stateDir+"/"+strconv.Itoa(rng.IntN(3)), "state")
			}
		}
		before := ""
		if hasHEAD(dir) {
			before = run(t, dir, "rev-parse", "HEAD")
		}
		res, err := Commit(dir, stateDir, "round "+strconv.Itoa(round), testNow)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		after := ""
		if hasHEAD(dir) {
			after = run(t, dir, "rev-parse", "HEAD")
		}
		if res.NoChanges != (before == after) || res.Hash != "" && res.Hash != after {
			t.Fatalf("round %d: %+v, HEAD %q -> %q", round, res, before, after)
		}
		run(t, dir, "add", "-A")
		if !hasHEAD(dir) {
			if got := run(t, dir, "ls-files"); got != "" {
				t.Fatalf("round %d: no commit but git add -A staged %q", round, got)
			}
			continue
		}
		if diff := run(t, dir, "diff", "--cached", "--name-status", "HEAD"); diff != "" {
			t.Fatalf("round %d: git add -A staged more after Commit:\n%s", round, diff)
		}
		n := len(lines(run(t, dir, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "HEAD")))
		if res.Hash != "" && n != res.Files {
			t.Fatalf("round %d: Files = %d, git counts %d", round, res.Files, n)
		}
	}
}
