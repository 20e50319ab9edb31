package gitx

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// numstat is the git binary's view of HEAD's changes: "added name" lines.
func numstat(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(run(t, dir, "show", "--numstat", "--format=", "HEAD"), "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			out = append(out, f[0]+" "+f[2])
		}
	}
	sort.Strings(out)
	return out
}

// A repository made by InitRepository and committed by Commit is one the git
// binary accepts (fsck), and LastCommit reports what git show --numstat does.
func TestInitRepositoryAndLastCommit(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if err := InitRepository(dir); err != nil {
		t.Fatal(err)
	}
	if err := InitRepository(dir); err != nil {
		t.Fatalf("InitRepository again: %v", err)
	}
	steps := []struct {
		name  string
		files map[string]string
	}{
		{"first commit", map[string]string{"index.html": "<h1>hi</h1>\n<p>x</p>\n", "css/site.css": "body{}\n"}},
		{"lines appended, a file added", map[string]string{"index.html": "<h1>hi</h1>\n<p>x</p>\n<p>more</p>\n", "js/app.js": "a\nb\nc\n"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			for name, content := range st.files {
				write(t, dir, name, content)
			}
			res, err := Commit(dir, ".plasmodium", st.name, testNow)
			if err != nil || res.Hash == "" {
				t.Fatalf("Commit = %+v, %v", res, err)
			}
			run(t, dir, "fsck", "--strict")
			if got := run(t, dir, "log", "-1", "--format=%s"); got != st.name {
				t.Errorf("git log subject = %q", got)
			}
			sum, err := LastCommit(dir)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Hash != res.Hash || strings.TrimSpace(sum.Message) != st.name {
				t.Errorf("LastCommit = %s %q, want %s %q", sum.Hash, sum.Message, res.Hash, st.name)
			}
			var got []string
			for _, f := range sum.Files {
				got = append(got, fmt.Sprintf("%d %s", f.Added, f.Name))
			}
			if want := numstat(t, dir); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("LastCommit files = %v, git numstat = %v", got, want)
			}
		})
	}
}

// What go-git's Open refused stays refused: a repository extension gitx
// does not implement (here SHA-256 object names) is an error, not a commit.
func TestCommitRefusesUnknownExtension(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if _, err := gitCmd(dir, "init", "-q", "--object-format=sha256"); err != nil {
		t.Skipf("this git cannot make a sha256 repository: %v", err)
	}
	write(t, dir, "a.txt", "a\n")
	res, err := Commit(dir, ".plasmodium", "x", testNow)
	if err == nil || !strings.Contains(err.Error(), "extension") {
		t.Fatalf("Commit = %+v, %v; want an unknown-extension error", res, err)
	}
	if _, err := os.Stat(dir + "/.git/index"); err == nil {
		t.Error("an index was written")
	}
}
