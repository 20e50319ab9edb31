package gitx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"os"
	"os/exec"
	"path/filepath"

	"strings"
	"syscall"
	"testing"
)

// Review findings of the git remote (issue 24, "git3"): each test failed
// on the code before its fix.

// TestHelperMirrorFetcher is the process the mirror test runs twice at
// once: rounds of a fetch into a mirror it first breaks (its main at an
// object nowhere), so each fetch makes a fresh mirror and swaps it in.
func TestHelperMirrorFetcher(t *testing.T) {
	clone, mirror := os.Getenv("GITX_HELPER_CLONE"), os.Getenv("GITX_HELPER_MIRROR")
	if clone == "" {
		t.Skip("helper process")
	}
	p, err := Locate(clone)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r, err := RemoteOf(p, "origin", mirror)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	want := os.Getenv("GITX_HELPER_MAIN")
	for range 6 {
		// main at an object the repository lacks (pruned by a gc): git
		// cannot fetch into it. Best effort: the other process may be
		// swapping the mirror.
		os.WriteFile(filepath.Join(mirror, "refs", "heads", "main"), []byte(strings.Repeat("ab", 20)+"\n"), 0o644)
		tips, err := r.Fetch()
		if err != nil || tips["refs/heads/main"] != want {
			fmt.Fprintf(os.Stderr, "%v, %v\n", tips, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

// Two pm processes that refresh the same mirror at once (each fetch fails
// on the mirror, so each makes a fresh one and swaps it in) must not swap
// over each other or remove the one the other uses: every fetch of both
// works, and one whole mirror is left, nothing beside it.
func TestMirrorRefreshIsSerialised(t *testing.T) {
	bare, clone, _ := remoteSetup(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	main := run(t, bare, "rev-parse", "main")
	cmds := make([]*exec.Cmd, 2)
	outs := make([]strings.Builder, 2)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperMirrorFetcher$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), "GITX_HELPER_CLONE="+clone, "GITX_HELPER_MIRROR="+mirror, "GITX_HELPER_MAIN="+main)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("fetcher %d: %v\n%s", i, err, outs[i].String())
		}
	}
	p, err := Locate(clone)
	must(t, err)
	r, err := RemoteOf(p, "origin", mirror)
	must(t, err)
	if tips, err := r.tips(); err != nil || tips["refs/heads/main"] != main {
		t.Fatalf("the mirror after both: %v, %v", tips, err)
	}
	for _, beside := range []string{".fresh", ".old"} {
		if _, err := os.Stat(mirror + beside); !os.IsNotExist(err) {
			t.Errorf("%s left beside the mirror: %v", beside, err)
		}
	}
}

// gitLog puts a git on PATH that notes each of its runs in the returned
// file, then runs the real one.
func gitLog(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("git")
	must(t, err)
	bin := t.TempDir()
	log := filepath.Join(bin, "git.log")
	script := "#!/bin/sh\necho \"$*\" >>" + log + "\nexec " + real + " \"$@\"\n"
	must(t, os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// runs is how many git processes the log noted since it was emptied.
func runs(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	os.Remove(log)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// A push or a deletion is one git process: the remote's branches as this
// machine knows them are the last fetch's (and the task machine's record
// of its own pushes), not a second record kept in the mirror by an
// update-ref after each push.
func TestPushIsOneGit(t *testing.T) {
	bare, clone, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	_, err = r.Fetch()
	must(t, err)
	main := run(t, bare, "rev-parse", "main")
	write(t, clone, "a.txt", "a\n")
	res, err := Commit(clone, stateDir, "a", testNow)
	must(t, err)
	log := gitLog(t)
	must(t, r.Push("refs/heads/pm/tk-1", "", res.Hash))
	if got := runs(t, log); len(got) != 1 || !strings.Contains(got[0], " push ") {
		t.Fatalf("a push ran %d git processes: %q", len(got), got)
	}
	if gone, err := r.Delete(map[string]string{"refs/heads/pm/tk-1": res.Hash}); err != nil || len(gone) != 1 {
		t.Fatalf("delete = %v, %v", gone, err)
	}
	if got := runs(t, log); len(got) != 1 || !strings.Contains(got[0], " push ") {
		t.Fatalf("a deletion ran %d git processes: %q", len(got), got)
	}
	if got := run(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/pm"); got != "" {
		t.Fatalf("the remote still has %s", got)
	}
	tips, err := r.Fetch()
	must(t, err)
	if tips["refs/heads/pm/tk-1"] != "" || tips["refs/heads/main"] != main {
		t.Fatalf("tips fetched after the push and deletion: %v", tips)
	}
}

// Many branches are deleted by one push, each by its own compare-and-set:
// one that moved meanwhile stays on the remote and is no error.
func TestDeleteManyIsOnePush(t *testing.T) {
	bare, clone, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	main := run(t, bare, "rev-parse", "main")
	write(t, clone, "a.txt", "a\n")
	res, err := Commit(clone, stateDir, "a", testNow)
	must(t, err)
	old := map[string]string{}
	for i := range 30 {
		ref := fmt.Sprintf("refs/heads/pm/tk-%d", i)
		run(t, clone, "push", "-q", "origin", main+":"+ref)
		old[ref] = main
	}
	run(t, clone, "push", "-q", "-f", "origin", res.Hash+":refs/heads/pm/tk-7") // moved by another machine
	log := gitLog(t)
	gone, err := r.Delete(old)
	if err != nil || len(gone) != 29 {
		t.Fatalf("delete of 30, one moved = %d deleted, %v", len(gone), err)
	}
	if got := runs(t, log); len(got) != 1 {
		t.Fatalf("the deletion ran %d git processes, want 1", len(got))
	}
	if left := run(t, bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/pm"); left != "refs/heads/pm/tk-7 "+res.Hash {
		t.Fatalf("left on the remote: %q", left)
	}
	gone, err = r.Delete(map[string]string{"refs/heads/pm/tk-7": main})
	if err != nil || len(gone) != 0 {
		t.Fatalf("delete of a moved branch alone = %v, %v; want none and no error", gone, err)
	}
}

// classify reads git's own words for a remote that refused this
// machine's credentials; a file this machine cannot read or write (pm's
// mirror, the repository's objects) is not a credentials problem.
func TestClassifyPermissionDenied(t *testing.T) {
	cases := []struct {
		msg  string
		want error
	}{
		{"git fetch ssh://h/r.git: git@h: Permission denied (publickey).; fatal: Could not read from remote repository.", ErrDenied},
		{"git push ssh://h/r.git: Permission denied, please try again.; fatal: Could not read from remote repository.", ErrDenied},
		{"git push https://h/r.git: remote: Permission to o/r.git denied to u.; fatal: unable to access 'https://h/r.git/': The requested URL returned error: 403", ErrDenied},
		{"git fetch https://h/r.git: fatal: Authentication failed for 'https://h/r.git/'", ErrDenied},
		{"git fetch /srv/r.git: error: cannot lock ref 'refs/heads/main': Unable to create '/p/.plasmodium/git/origin.git/refs/heads/main.lock': Permission denied", nil},
		{"git fetch /srv/r.git: fatal: cannot open '/p/.plasmodium/git/origin.git/FETCH_HEAD': Permission denied", nil},
		{"git fetch /srv/r.git: error: insufficient permission for adding an object to repository database /p/.git/objects", nil},
		{"git fetch ssh://h/r.git: ssh: connect to host h port 22: Connection refused; fatal: Could not read from remote repository.", ErrUnreachable},
	}
	for _, c := range cases {
		err := classify(errors.New(c.msg))
		for _, kind := range []error{ErrDenied, ErrUnreachable} {
			if errors.Is(err, kind) != (kind == c.want) {
				t.Errorf("classify(%q) is %v: errors.Is(%v) = %v", c.msg, err, kind, errors.Is(err, kind))
			}
		}
	}
}

// A remote reached through ssh that refuses the key is ErrDenied, as
// git's own run says it (a fake ssh that answers as sshd's refusal does).
func TestRemoteSSHRefusalIsDenied(t *testing.T) {
	_, _, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	r.URL = "ssh://git@example.invalid/r.git"
	ssh := filepath.Join(t.TempDir(), "ssh")
	must(t, os.WriteFile(ssh, []byte("#!/bin/sh\necho 'git@example.invalid: Permission denied (publickey).' >&2\nexit 255\n"), 0o755))
	t.Setenv("GIT_SSH_COMMAND", ssh)
	if _, err := r.Fetch(); !errors.Is(err, ErrDenied) {
		t.Fatalf("fetch refused by ssh = %v, want ErrDenied", err)
	}
}

// pm's mirror that this user cannot write (made by another user, or its
// modes changed) is no credentials problem: the fetch is made again into
// a fresh mirror, which replaces it. Run as a user permissions bind (not
// root).
func TestRemoteLocalPermissionIsNotDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root is not bound by file modes: run as uid 1000 (scripts/test-as-user.sh)")
	}
	bare, _, p := remoteSetup(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	r, err := RemoteOf(p, "origin", mirror)
	must(t, err)
	_, err = r.Fetch()
	must(t, err)
	seed := filepath.Join(filepath.Dir(bare), "seed")
	write(t, seed, "b.txt", "b\n")
	commitAll(t, seed)
	run(t, seed, "push", "-q", "origin", "HEAD:refs/heads/main")
	main := run(t, bare, "rev-parse", "main")
	heads := filepath.Join(mirror, "refs", "heads")
	must(t, os.Chmod(heads, 0o500))
	t.Cleanup(func() { os.Chmod(heads, 0o700) })
	tips, err := r.Fetch()
	if errors.Is(err, ErrDenied) {
		t.Fatalf("a mirror this user cannot write was taken for refused credentials: %v", err)
	}
	if err != nil || tips["refs/heads/main"] != main {
		t.Fatalf("fetch past a mirror this user cannot write = %v, %v; want main at %s", tips, err, main)
	}
	for _, beside := range []string{".fresh", ".old"} {
		if _, err := os.Stat(mirror + beside); !os.IsNotExist(err) {
			t.Errorf("%s left beside the mirror: %v", beside, err)
		}
	}
}

// stalled is a TCP listener that accepts connections, reads what comes
// and never answers (a remote host that takes the connection and hangs).
func stalled(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					c.SetReadDeadline(time.Now().Add(time.Second))
					if _, err := c.Read(buf); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
						return
					}
					select {
					case <-done:
						return
					default:
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A remote that takes the connection and never answers ends at the
// Remote's own timeout (the caller's setting), as ErrUnreachable.
func TestRemoteTimeoutIsTheCallers(t *testing.T) {
	_, _, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	r.URL = "git://" + stalled(t) + "/r.git"
	r.Timeout = time.Second
	_, err = r.Fetch()
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("fetch from a remote that never answers = %v, want ErrUnreachable (no answer)", err)
	}
}

// A fetch waits for another process's hold of the mirror at most its own
// timeout (a kill bounded by git.remote_timeout does not wait out a longer
// fetch elsewhere), and a hold it got too late is let go: the next fetch
// works.
func TestMirrorLockWaitIsBounded(t *testing.T) {
	bare, _, p := remoteSetup(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	r, err := RemoteOf(p, "origin", mirror)
	must(t, err)
	unlock, err := lockMirror(context.Background(), mirror, syscall.LOCK_EX)
	must(t, err)
	busy := r
	busy.Timeout = time.Second
	if _, err := busy.Fetch(); !errors.Is(err, ErrBusy) || errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "fetching or pushing") {
		t.Fatalf("fetch while another process holds the mirror = %v", err)
	}
	unlock()
	tips, err := r.Fetch()
	if err != nil || tips["refs/heads/main"] != run(t, bare, "rev-parse", "main") {
		t.Fatalf("fetch once the mirror is free = %v, %v", tips, err)
	}
}

// The wait for the mirror's lock is taken from the fetch's time, not added
// to it: a fetch whose wait used all of its time (the hook stands for the
// other process that held the lock so long) starts no git and is
// ErrNoAnswer, not a git run with a fresh bound of its own.
func TestMirrorLockWaitIsTakenFromTheRunsTime(t *testing.T) {
	_, _, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	r.URL = "git://" + stalled(t) + "/r.git"
	r.Timeout = time.Second
	locked = func(ctx context.Context) { <-ctx.Done() }
	t.Cleanup(func() { locked = nil })
	log := gitLog(t)
	_, err = r.Fetch()
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("fetch whose lock wait took all its time = %v, want ErrNoAnswer", err)
	}
	if got := runs(t, log); len(got) != 0 {
		t.Fatalf("git ran after the fetch's time was up: %q", got)
	}
}

// A push checks its branch as a deletion does (one validBranchRef): a
// space, tab, newline or ':' would change git's command line.
func TestPushAndDeleteRefuseTheSameRefs(t *testing.T) {
	_, _, p := remoteSetup(t)
	r, err := RemoteOf(p, "origin", filepath.Join(t.TempDir(), "mirror"))
	must(t, err)
	log := gitLog(t)
	h := strings.Repeat("a", 40)
	for _, ref := range []string{"refs/heads/a b", "refs/heads/a\tb", "refs/heads/a\nb", "refs/heads/a:b", "refs/heads/", "refs/tags/x", "refs/heads/a..b"} {
		if err := r.Push(ref, "", h); err == nil || !strings.Contains(err.Error(), "not a branch") {
			t.Errorf("Push(%q) = %v, want refused", ref, err)
		}
		if _, err := r.Delete(map[string]string{ref: h}); err == nil || !strings.Contains(err.Error(), "not a branch") {
			t.Errorf("Delete(%q) = %v, want refused", ref, err)
		}
	}
	if got := runs(t, log); len(got) != 0 {
		t.Fatalf("git ran for a refused ref: %q", got)
	}
}

// removeMirror's chmod follows no symbolic link: one swapped in for a
// directory of the mirror leaves the directory it names as it was.
func TestRemoveMirrorChmodFollowsNoLink(t *testing.T) {
	outside := t.TempDir()
	must(t, os.Chmod(outside, 0o755))
	link := filepath.Join(t.TempDir(), "objects")
	must(t, os.Symlink(outside, link))
	if err := chmodNoFollow(link, 0o700); err == nil {
		t.Fatal("chmodNoFollow of a symbolic link worked")
	}
	fi, err := os.Stat(outside)
	must(t, err)
	if fi.Mode().Perm() != 0o755 {
		t.Fatalf("the directory a link names got mode %v", fi.Mode().Perm())
	}
	dir := filepath.Join(t.TempDir(), "d")
	must(t, os.Mkdir(dir, 0o500))
	must(t, chmodNoFollow(dir, 0o700))
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("chmodNoFollow of a directory: %v, %v", fi, err)
	}
}

// TestMirrorRefreshIsSerialised, made certain: a refresh held between its
// fresh mirror's fetch and its swap (the hook) keeps a second refresh out
// for all of the second's time (ErrBusy: it neither removes the first's
// fresh mirror nor swaps its own in), and the first then ends whole.
func TestMirrorRefreshWaitsForTheOther(t *testing.T) {
	bare, _, p := remoteSetup(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	r, err := RemoteOf(p, "origin", mirror)
	must(t, err)
	_, err = r.Fetch()
	must(t, err)
	main := run(t, bare, "rev-parse", "main")
	// main at an object the repository lacks: the fetch makes a fresh mirror.
	must(t, os.WriteFile(filepath.Join(mirror, "refs", "heads", "main"), []byte(strings.Repeat("ab", 20)+"\n"), 0o644))
	held, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	swapping = func() {
		if calls.Add(1) == 1 { // the first refresh only: a second one that got here is not held
			close(held)
			<-release
		}
	}
	t.Cleanup(func() { swapping = nil })
	type result struct {
		tips map[string]string
		err  error
	}
	first := make(chan result, 1)
	go func() {
		tips, err := r.Fetch()
		first <- result{tips, err}
	}()
	<-held
	second := r
	second.Timeout = time.Second
	_, err = second.Fetch()
	close(release)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("a refresh while another is between its fetch and its swap = %v, want ErrBusy", err)
	}
	if got := <-first; got.err != nil || got.tips["refs/heads/main"] != main {
		t.Fatalf("the first refresh = %v, %v", got.tips, got.err)
	}
	for _, beside := range []string{".fresh", ".old"} {
		if _, err := os.Stat(mirror + beside); !os.IsNotExist(err) {
			t.Errorf("%s left beside the mirror: %v", beside, err)
		}
	}
}
