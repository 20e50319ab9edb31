package gitx

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// longHistory makes a repository of n commits on main, one per second,
// and a branch side of one commit on top of main's commit at fork (1 is
// the first), through git fast-import; it returns the directory.
func longHistory(t testing.TB, n, fork int) string {
	t.Helper()
	needGit(t)
	isolate(t)
	dir := filepath.Join(t.TempDir(), "long")
	run(t, t.TempDir(), "init", "-q", "-b", "main", dir)
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "commit refs/heads/main\nmark :%d\ncommitter t <t@localhost> %d +0000\ndata 4\nc%03d\n", i, 1700000000+i, i%1000)
		if i > 1 {
			fmt.Fprintf(&b, "from :%d\n", i-1)
		}
		fmt.Fprintf(&b, "M 644 inline n.txt\ndata %d\n%d\n\n", len(fmt.Sprint(i))+1, i)
	}
	fmt.Fprintf(&b, "commit refs/heads/side\nmark :%d\ncommitter t <t@localhost> %d +0000\ndata 4\nside\nfrom :%d\nM 644 inline side.txt\ndata 5\nside\n\n", n+1, 1700000000+fork, fork)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	return dir
}

// IsAncestor on a history of thousands of commits is right both ways, and
// stops where the two histories meet: in a shallow clone, whose history
// below the last 20 commits is not there, an answer near the tips is
// given without reading what is cut (the old walk read every ancestor of
// b when a was not one, and failed on the first missing commit).
func TestIsAncestorOnALongHistory(t *testing.T) {
	src := longHistory(t, 3000, 2990)
	p, err := Locate(src)
	must(t, err)
	main, side := run(t, src, "rev-parse", "main"), run(t, src, "rev-parse", "side")
	first := run(t, src, "rev-list", "--max-parents=0", "main")
	near := run(t, src, "rev-parse", "main~5")
	for _, c := range []struct {
		a, b string
		want bool
	}{{first, main, true}, {near, main, true}, {side, main, false}, {main, side, false}, {near, side, false}, {main, main, true}} {
		if got, err := IsAncestor(p, c.a, c.b); err != nil || got != c.want {
			t.Errorf("IsAncestor(%.8s, %.8s) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}

	shallow := filepath.Join(t.TempDir(), "shallow")
	run(t, src, "clone", "-q", "--depth", "20", "--no-single-branch", "file://"+src, shallow)
	sp, err := Locate(shallow)
	must(t, err)
	for _, c := range []struct {
		a, b string
		want bool
	}{{side, main, false}, {near, main, true}, {main, side, false}} {
		if got, err := IsAncestor(sp, c.a, c.b); err != nil || got != c.want {
			t.Errorf("shallow: IsAncestor(%.8s, %.8s) = %v, %v; want %v (a walk past where they meet reads the cut history)", c.a, c.b, got, err, c.want)
		}
	}
}

// BenchmarkIsAncestor: a commit near main's tip that is not on it (the
// common answer of pm task's check), on a history of 20,000 commits.
func BenchmarkIsAncestor(b *testing.B) {
	src := longHistory(b, 20000, 19990)
	p, err := Locate(src)
	if err != nil {
		b.Fatal(err)
	}
	main, side := run(b, src, "rev-parse", "main"), run(b, src, "rev-parse", "side")
	for b.Loop() {
		if ok, err := IsAncestor(p, side, main); err != nil || ok {
			b.Fatal(ok, err)
		}
	}
}

// mirrorRefs is what the mirror's ref files hold (loose and packed).
func mirrorRefs(t *testing.T, mirror string) string {
	t.Helper()
	var b strings.Builder
	if data, err := os.ReadFile(filepath.Join(mirror, "packed-refs")); err == nil {
		b.Write(data)
	}
	filepath.Walk(filepath.Join(mirror, "refs"), func(path string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			data, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(mirror, path)
			fmt.Fprintf(&b, "%s %s", strings.TrimSpace(string(data)), rel)
			b.WriteString("\n")
		}
		return nil
	})
	return b.String()
}

// Looking a remote up writes nothing (pm status does it): the mirror is
// made, and seeded, by the first fetch.
func TestRemoteOfOnlyReads(t *testing.T) {
	_, _, p := remoteSetup(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	if _, err := RemoteOf(p, "origin", mirror); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mirror); !os.IsNotExist(err) {
		t.Fatalf("RemoteOf made the mirror (%v)", err)
	}
}

// A fetch that fails because the remote refuses this machine's
// credentials (or any failure to reach it) leaves pm's mirror as it was:
// only a mirror git cannot use is made again.
func TestRemoteFetchKeepsTheMirrorOnAuthError(t *testing.T) {
	bare, _, p := remoteSetup(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	r, err := RemoteOf(p, "origin", mirror)
	must(t, err)
	if _, err := r.Fetch(); err != nil {
		t.Fatal(err)
	}
	main := run(t, bare, "rev-parse", "main")
	if !strings.Contains(mirrorRefs(t, mirror), main+" refs/heads/main") {
		t.Fatalf("mirror after a fetch: %q", mirrorRefs(t, mirror))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="pm test"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	defer srv.Close()
	denied := r
	denied.URL = srv.URL + "/project.git"
	_, err = denied.Fetch()
	if err == nil {
		t.Fatal("a fetch the remote refused succeeded")
	}
	if !strings.Contains(mirrorRefs(t, mirror), main+" refs/heads/main") {
		t.Fatalf("the mirror lost its refs on an auth error (%v): %q", err, mirrorRefs(t, mirror))
	}
	unreachable := r
	unreachable.URL = filepath.Join(t.TempDir(), "gone.git")
	if _, err = unreachable.Fetch(); err == nil {
		t.Fatal("a fetch from a missing remote succeeded")
	}
	if !strings.Contains(mirrorRefs(t, mirror), main+" refs/heads/main") {
		t.Fatalf("the mirror lost its refs on an unreachable remote (%v): %q", err, mirrorRefs(t, mirror))
	}
}
