package gitx

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
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
		{"a large file", map[string]string{"big.txt": bigFile(20000, 0, 0)}},
		{"large file's lines changed and appended", map[string]string{"big.txt": bigFile(20500, 97, 3) + "no final newline"}},
		{"large file's lines removed", map[string]string{"big.txt": bigFile(15000, 0, 0)}},
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

// bigFile is n distinct lines of about 100 bytes, every changeEvery-th
// (if not 0) rewritten, with repeat copies of line 1 appended.
func bigFile(n, changeEvery, repeat int) string {
	var b strings.Builder
	for i := range n {
		tag := "line"
		if changeEvery > 0 && i%changeEvery == 0 {
			tag = "changed"
		}
		fmt.Fprintf(&b, "%s %06d %s\n", tag, i, strings.Repeat("x", 88))
	}
	for range repeat {
		fmt.Fprintf(&b, "line %06d %s\n", 1, strings.Repeat("x", 88))
	}
	return b.String()
}

// LastCommit's memory does not grow with the bytes of the files a commit
// changed: counted in bytes allocated (a count, not time), summarising a
// change to a 2 MB file of 100-byte lines allocates less than half of it
// (a hash per line); reading both versions whole, as go-git does by
// default, and splitting them into strings took 18 times the file.
func TestLastCommitStreamsLargeFiles(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if err := InitRepository(dir); err != nil {
		t.Fatal(err)
	}
	for i, content := range []string{bigFile(20000, 0, 0), bigFile(20000, 50, 30)} {
		write(t, dir, "big.txt", content)
		if _, err := Commit(dir, ".plasmodium", fmt.Sprint("version ", i), testNow); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sum, err := LastCommit(dir)
	runtime.ReadMemStats(&after)
	if err != nil || len(sum.Files) != 1 || sum.Files[0].Added != 20000/50+30 {
		t.Fatalf("LastCommit = %+v, %v; want big.txt with %d lines added", sum, err, 20000/50+30)
	}
	if want := numstat(t, dir); len(want) != 1 || want[0] != fmt.Sprint(sum.Files[0].Added, " big.txt") {
		t.Errorf("git numstat = %v", want)
	}
	size := len(bigFile(20000, 0, 0))
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes allocated for a %d byte file", alloc, size)
	if alloc >= uint64(size/2) {
		t.Errorf("LastCommit allocated %d bytes for a change to a %d byte file, want less than half", alloc, size)
	}
	// The same from a pack (large objects and deltas are read differently).
	run(t, dir, "repack", "-a", "-d", "-q")
	if packed, err := LastCommit(dir); err != nil || fmt.Sprint(packed) != fmt.Sprint(sum) {
		t.Errorf("LastCommit after repack = %+v, %v; want %+v", packed, err, sum)
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

// addedLines counts what the old definition counted (both versions split
// at "\n" after dropping one final "\n", compared as multisets), streamed:
// short and empty blobs, missing final newlines, repeated lines, and lines
// longer than the read buffer.
func TestAddedLinesAsSplit(t *testing.T) {
	long := strings.Repeat("y", 200<<10)
	tests := []struct{ old, cur string }{
		{"", ""},
		{"", "a"},
		{"", "\n"},
		{"\n", "\n\n"},
		{"a\nb\n", "a\nb"},
		{"a\nb", "b\na\nc\n"},
		{"a\na\nb\n", "a\na\na\nb\nb\n"},
		{"x\n" + long + "\n", long + "z\n" + long + "\nx"},
		{long, long + "\n" + long},
	}
	for _, tt := range tests {
		st := memory.NewStorage()
		old, cur := storeBlob(t, st, tt.old), storeBlob(t, st, tt.cur)
		got, err := addedLines(st, old, cur, true)
		if want := splitAdded(tt.old, tt.cur); err != nil || got != want {
			t.Errorf("addedLines(%.20q, %.20q) = %d, %v; want %d", tt.old, tt.cur, got, err, want)
		}
		if got, _ := addedLines(st, plumbing.ZeroHash, cur, false); got != splitAdded("", tt.cur) {
			t.Errorf("addedLines(new file %.20q) = %d; want %d", tt.cur, got, splitAdded("", tt.cur))
		}
	}
}

// splitAdded is addedLines as it was, on whole strings.
func splitAdded(old, cur string) int {
	lines := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	have := map[string]int{}
	for _, l := range lines(old) {
		have[l]++
	}
	n := 0
	for _, l := range lines(cur) {
		if have[l] > 0 {
			have[l]--
			continue
		}
		n++
	}
	return n
}

func storeBlob(t *testing.T, st *memory.Storage, content string) plumbing.Hash {
	t.Helper()
	o := st.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, err := o.Writer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, content); err != nil {
		t.Fatal(err)
	}
	w.Close()
	h, err := st.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
