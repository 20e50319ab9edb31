package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// remoteSetup is a bare repository (the remote) with one commit on main
// and a clone of it; it returns the remote, the clone and the clone's pin.
func remoteSetup(t *testing.T) (bare, clone string, p Pin) {
	t.Helper()
	needGit(t)
	isolate(t)
	root := t.TempDir()
	bare = filepath.Join(root, "remote.git")
	run(t, root, "init", "-q", "--bare", "-b", "main", bare)
	seed := filepath.Join(root, "seed")
	run(t, root, "clone", "-q", bare, seed)
	write(t, seed, "README", "one\n")
	commitAll(t, seed)
	run(t, seed, "push", "-q", "origin", "HEAD:refs/heads/main")
	clone = filepath.Join(root, "clone")
	run(t, root, "clone", "-q", bare, clone)
	p, err := Locate(clone)
	must(t, err)
	return bare, clone, p
}

// Fetch and Push with a compare-and-set: a push whose expected old tip is
// not the remote's is ErrStale and moves nothing; one that is, moves it.
func TestRemoteFetchPushLease(t *testing.T) {
	bare, clone, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	tips, err := r.Fetch()
	must(t, err)
	main := tips["refs/heads/main"]
	if main != run(t, bare, "rev-parse", "main") {
		t.Fatalf("fetched main %q, remote has %q", main, run(t, bare, "rev-parse", "main"))
	}
	write(t, clone, "a.txt", "a\n")
	res, err := Commit(clone, stateDir, "a", testNow)
	must(t, err)
	// Expected old tip wrong (absent): refused, remote unchanged.
	if err := r.Push("refs/heads/main", "", res.Hash); !errors.Is(err, ErrStale) {
		t.Fatalf("push with a stale lease = %v, want ErrStale", err)
	}
	if got := run(t, bare, "rev-parse", "main"); got != main {
		t.Fatalf("a stale push moved main to %s", got)
	}
	must(t, r.Push("refs/heads/main", main, res.Hash))
	if got := run(t, bare, "rev-parse", "main"); got != res.Hash {
		t.Fatalf("main = %s after the push, want %s", got, res.Hash)
	}
	// A new branch: expected absent.
	must(t, r.Push("refs/heads/pm/tk-1", "", res.Hash))
	tips, err = r.Fetch()
	must(t, err)
	if tips["refs/heads/pm/tk-1"] != res.Hash {
		t.Fatalf("tips = %v", tips)
	}
	must(t, SetRef(p, "refs/pm/remote/origin/heads/main", res.Hash))
	if _, tip, err := StartPoint(p, "refs/pm/remote/origin/heads/main"); err != nil || tip != res.Hash {
		t.Fatalf("SetRef: tip %q, %v", tip, err)
	}
	if ok, err := IsAncestor(p, main, res.Hash); err != nil || !ok {
		t.Fatalf("IsAncestor(main, new) = %v, %v", ok, err)
	}
	if ok, err := IsAncestor(p, res.Hash, main); err != nil || ok {
		t.Fatalf("IsAncestor(new, main) = %v, %v", ok, err)
	}
}

// Nothing the repository's config or hooks say steers pm's git: no hook
// (reference-transaction, pre-push, post-checkout), core.sshCommand,
// credential helper, fsmonitor or url rewrite of the clone's runs or
// applies, and an inherited GIT_DIR is ignored.
func TestRemoteRunsNothingTheRepositoryNames(t *testing.T) {
	bare, clone, p := remoteSetup(t)
	mark := t.TempDir()
	f, err := os.OpenFile(filepath.Join(clone, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("[core]\n\tfsmonitor = \"touch " + mark + "/PWNED-fsmonitor\"\n\tsshCommand = \"touch " + mark + "/PWNED-ssh\"\n" +
		"[credential]\n\thelper = \"!touch " + mark + "/PWNED-credential\"\n" +
		"[url \"" + filepath.Join(mark, "elsewhere.git") + "\"]\n\tinsteadOf = " + bare + "\n")
	must(t, err)
	must(t, f.Close())
	for _, h := range []string{"reference-transaction", "pre-push", "post-checkout", "pre-auto-gc", "post-merge"} {
		write(t, clone, ".git/hooks/"+h, "#!/bin/sh\ntouch "+mark+"/PWNED-hook-"+h+"\n")
		must(t, os.Chmod(filepath.Join(clone, ".git", "hooks", h), 0o755))
	}
	t.Setenv("GIT_DIR", filepath.Join(mark, "not-a-repo"))
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	tips, err := r.Fetch()
	must(t, err)
	write(t, clone, "b.txt", "b\n")
	res, err := Commit(clone, stateDir, "b", testNow)
	must(t, err)
	must(t, r.Push("refs/heads/main", tips["refs/heads/main"], res.Hash))
	if got := run(t, bare, "--git-dir="+bare, "rev-parse", "main"); got != res.Hash {
		t.Fatalf("remote main = %s, want %s (pushed through a rewritten URL?)", got, res.Hash)
	}
	ents, err := os.ReadDir(mark)
	must(t, err)
	for _, e := range ents {
		t.Errorf("ran or used what the repository names: %s", e.Name())
	}
}

// A remote that cannot be reached is an error that names it, soon (no
// prompt waits); a URL that runs a command is refused before git runs.
func TestRemoteErrors(t *testing.T) {
	_, clone, p := remoteSetup(t)
	run(t, clone, "remote", "add", "gone", filepath.Join(t.TempDir(), "missing.git"))
	run(t, clone, "remote", "add", "evil", "ext::sh -c touch% /tmp/pm-PWNED-ext")
	run(t, clone, "remote", "add", "prompt", "http://127.0.0.1:1/x.git")
	r, err := RemoteOf(p, "gone", filepath.Join(t.TempDir(), "m1"))
	must(t, err)
	if _, err := r.Fetch(); err == nil || !strings.Contains(err.Error(), "missing.git") {
		t.Fatalf("fetch from a missing remote = %v", err)
	}
	if _, err := RemoteOf(p, "evil", t.TempDir()); err == nil || !strings.Contains(err.Error(), "runs a command") {
		t.Fatalf("ext:: remote = %v", err)
	}
	if _, err := RemoteOf(p, "nope", t.TempDir()); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("missing remote = %v, want ErrNoRemote", err)
	}
	r, err = RemoteOf(p, "prompt", filepath.Join(t.TempDir(), "m2"))
	must(t, err)
	if _, err := r.Fetch(); err == nil {
		t.Fatal("fetch from a refused port succeeded")
	}
}

// A remote named by a relative path is the checkout's (where git resolves
// it), not the mirror's; a fresh mirror starts with the clone's
// remote-tracking refs, so its first fetch sends what the clone has.
func TestRemoteRelativeAndSeeded(t *testing.T) {
	bare, clone, p := remoteSetup(t)
	run(t, clone, "remote", "add", "rel", "../"+filepath.Base(bare))
	mirror := filepath.Join(t.TempDir(), "mirror")
	r, err := RemoteOf(p, "rel", mirror)
	must(t, err)
	if _, err := r.Fetch(); err != nil {
		t.Fatalf("fetch from a relative remote: %v", err)
	}
	r2, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "seeded"))
	must(t, err)
	r2.seedMirror() // what the first fetch does first
	b, err := os.ReadFile(filepath.Join(r2.Mirror, "packed-refs"))
	if err != nil || !strings.Contains(string(b), run(t, clone, "rev-parse", "origin/main")+" refs/heads/main\n") {
		t.Fatalf("seeded mirror's packed-refs = %q, %v", b, err)
	}
	tips, err := r2.Fetch()
	must(t, err)
	if tips["refs/heads/main"] != run(t, bare, "--git-dir="+bare, "rev-parse", "main") {
		t.Fatalf("tips after a seeded fetch = %v", tips)
	}
}

// BenchmarkRemote measures what code through a git remote adds per pm done:
// a fetch with nothing new, and a push (with its compare-and-set) of a new
// commit, against `git fetch` run by hand in the clone.
func BenchmarkRemote(b *testing.B) {
	needGit(b)
	isolate(b)
	root := b.TempDir()
	bare := filepath.Join(root, "remote.git")
	run(b, root, "init", "-q", "--bare", "-b", "main", bare)
	seed := filepath.Join(root, "seed")
	run(b, root, "clone", "-q", bare, seed)
	write(b, seed, "README", "one\n")
	commitAll(b, seed)
	run(b, seed, "push", "-q", "origin", "HEAD:refs/heads/main")
	clone := filepath.Join(root, "clone")
	run(b, root, "clone", "-q", bare, clone)
	p, err := Locate(clone)
	if err != nil {
		b.Fatal(err)
	}
	r, err := RemoteOf(p, "origin", filepath.Join(b.TempDir(), "mirror"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fetch-by-hand", func(b *testing.B) {
		for b.Loop() {
			run(b, clone, "fetch", "-q", "origin")
		}
	})
	b.Run("fetch", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Fetch(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("commit+push", func(b *testing.B) {
		tips, err := r.Fetch()
		if err != nil {
			b.Fatal(err)
		}
		old := tips["refs/heads/main"]
		i := 0
		for b.Loop() {
			i++
			write(b, clone, "n.txt", strings.Repeat("x", i))
			res, err := Commit(clone, stateDir, "n", testNow)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Push("refs/heads/main", old, res.Hash); err != nil {
				b.Fatal(err)
			}
			old = res.Hash
		}
	})
}

// A ref name comes from records other machines wrote (a task's branch and
// where it merges): one that would lead out of refs/ is refused by SetRef
// and DropRef, and nothing outside refs/ is written or removed.
func TestRefNamesStayInRefs(t *testing.T) {
	dir, p := newProject(t, map[string]string{"a.txt": "a\n"})
	head := run(t, dir, "rev-parse", "HEAD")
	config := filepath.Join(dir, ".git", "config")
	before, err := os.ReadFile(config)
	must(t, err)
	for _, name := range []string{
		"refs/pm/remote/origin/heads/../../../../config",
		"refs/pm/../config",
		"refs/pm/x/./y",
		"refs/pm/x//y",
		"refs/pm/x.lock",
		"refs/pm/x\x01y",
		"refs/pm/",
	} {
		if err := SetRef(p, name, head); err == nil {
			t.Errorf("SetRef(%q) accepted", name)
		}
		if err := DropRef(p, name); err == nil {
			t.Errorf("DropRef(%q) accepted", name)
		}
	}
	after, err := os.ReadFile(config)
	if err != nil || string(after) != string(before) {
		t.Fatalf(".git/config changed (%v)", err)
	}
	must(t, SetRef(p, "refs/pm/remote/origin/heads/main", head))
	must(t, DropRef(p, "refs/pm/remote/origin/heads/main"))
}

// A fetch's failure says what kind it is (credentials, or no remote
// there), and a mirror git cannot use (a ref at an object the repository
// no longer has) is made again: the fetch works, and the tips are the
// remote's.
func TestRemoteFetchErrorKindsAndRepair(t *testing.T) {
	bare, _, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	if tips, err := r.tips(); err != nil || len(tips) != 0 {
		t.Fatalf("tips of a mirror not made yet = %v, %v", tips, err)
	}
	_, err = r.Fetch()
	must(t, err)
	main := run(t, bare, "rev-parse", "main")
	if tips, err := r.tips(); err != nil || tips["refs/heads/main"] != main {
		t.Fatalf("tips after a fetch = %v, %v", tips, err)
	}
	gone := r
	gone.URL = filepath.Join(t.TempDir(), "gone.git")
	if _, err := gone.Fetch(); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("fetch from a missing remote = %v, want ErrUnreachable", err)
	}
	// The mirror's main at an object nowhere (pruned by a gc of the
	// repository): git cannot fetch into it. (A ref the remote lacks at
	// such an object is only pruned: it makes no failure.)
	write(t, r.Mirror, "refs/heads/main", strings.Repeat("ab", 20)+"\n")
	tips, err := r.Fetch()
	if err != nil || tips["refs/heads/main"] != main {
		t.Fatalf("fetch into a broken mirror = %v, %v", tips, err)
	}
	if _, err := os.Stat(r.Mirror + ".fresh"); !os.IsNotExist(err) {
		t.Fatalf("the fresh mirror was left beside: %v", err)
	}
}

// classify reads git's English messages: a user whose git speaks another
// language (here French, whose catalogue Debian's git ships) must still
// get them, or an unreachable remote is not recognised as one.
func TestRemoteMessagesAreEnglishWhateverTheLocale(t *testing.T) {
	if _, err := os.Stat("/usr/share/locale/fr/LC_MESSAGES/git.mo"); err != nil {
		t.Skip("git has no French catalogue here")
	}
	_, _, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	r.URL = filepath.Join(t.TempDir(), "gone.git")
	t.Setenv("LANGUAGE", "fr")
	t.Setenv("LC_ALL", "C.UTF-8")
	if _, err := r.Fetch(); err == nil || !strings.Contains(err.Error(), "Could not read from remote") {
		t.Fatalf("fetch from a missing remote under a French locale = %v, want git's English message", err)
	}
}
