package gitx

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/driver"
)

// A lock file found where pm wants to take its own: removed only when pm
// wrote it (a marker shares its inode) and that writer is dead.
func TestTakeLockLeftBehind(t *testing.T) {
	parent, err := driver.Find(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	live := strconv.Itoa(parent.Pid) + "-" + strconv.FormatUint(parent.PidStart, 10) + "-" + bootID()
	tests := []struct {
		name    string
		tag     string // marker of the lock ("": a lock no marker shares)
		linked  bool   // the marker is the lock's inode
		taken   bool
		pmPid   int
		removed bool // the old marker is gone afterwards
	}{
		{name: "dead pm (no such pid)", tag: "4194304999-1-" + bootID(), linked: true, taken: true, removed: true},
		{name: "pm of another boot", tag: live[:strings.LastIndex(live, "-")] + "-ffffffff", linked: true, taken: true, removed: true},
		{name: "live pm", tag: live, linked: true, pmPid: parent.Pid},
		{name: "another git process's lock", taken: false},
		{name: "a dead pm's marker beside another process's lock", tag: "4194304999-1-" + bootID(), linked: false, removed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "index")
			lock := target + ".lock"
			if err := os.WriteFile(lock, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			marker := ""
			if tt.tag != "" {
				marker = target + markerInfix + tt.tag + ".lock"
				if tt.linked {
					if err := os.Link(lock, marker); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(marker, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := takeLock(target)
			if tt.taken {
				if err != nil {
					t.Fatalf("takeLock: %v; want the lock taken", err)
				}
				commitThrough(t, l, target, dir)
				return
			}
			var le *LockError
			if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
				t.Fatalf("takeLock = %v; want a *LockError", err)
			}
			if le.PmPid != tt.pmPid || le.Path != lock {
				t.Fatalf("LockError = %+v; want pm pid %d at %s", le, tt.pmPid, lock)
			}
			if strings.Count(err.Error(), "gitx:") != 1 || !strings.Contains(le.Try(), "wait") {
				t.Errorf("error %q, Try %q", err, le.Try())
			}
			if b, err := os.ReadFile(lock); err != nil || string(b) != "old" {
				t.Fatalf("the lock was touched: %q, %v", b, err)
			}
			if marker != "" {
				if _, err := os.Lstat(marker); (err == nil) == tt.removed {
					t.Errorf("marker present = %v; want removed = %v", err == nil, tt.removed)
				}
			}
		})
	}
}

// assertNoLocks fails if a lock file or a marker is left in dir.
// commitThrough writes through the lock l and commits it: target holds
// what was written, and no lock or marker is left in dir.
func commitThrough(t *testing.T, l *ownLock, target, dir string) {
	t.Helper()
	if _, err := l.f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if err := l.commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target = %q", b)
	}
	assertNoLocks(t, dir)
}

func assertNoLocks(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHelperCommit is the process the kill tests kill: one Commit of the
// repository GITX_HELPER_REPO.
func TestHelperCommit(t *testing.T) {
	dir := os.Getenv("GITX_HELPER_REPO")
	if dir == "" {
		t.Skip("helper process")
	}
	if _, err := Commit(dir, stateDir, "killed maybe", testNow); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// killedCommit runs one Commit of dir in a helper process, with env, and
// waits for it; after (when > 0) it is killed with SIGKILL.
func killedCommit(t *testing.T, dir string, after time.Duration, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCommit$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "GITX_HELPER_REPO="+dir), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if after > 0 {
		timer := time.AfterFunc(after, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	cmd.Wait() // killed or not: the state it left is what is checked
}

// A commit killed at each of its crash points (inside the index lock,
// inside the ref lock) leaves its lock behind; the next Commit removes it
// and commits, and nothing pm wrote stays in .git.
func TestCommitKilledAtCrashPoints(t *testing.T) {
	needGit(t)
	for _, point := range []string{"gitx.commit.index", "gitx.commit.ref", "gitx.commit.moved"} {
		t.Run(point, func(t *testing.T) {
			isolate(t)
			dir := t.TempDir()
			initRepo(t, dir)
			write(t, dir, "a.txt", "a")
			commitAll(t, dir)
			write(t, dir, "a.txt", "changed")
			killedCommit(t, dir, 0, "PM_TEST_CRASH_AT="+point)
			lock := map[string]string{"gitx.commit.index": ".git/index.lock", "gitx.commit.ref": ".git/refs/heads/main.lock",
				"gitx.commit.moved": ".git/index.lock"}[point]
			if _, err := os.Lstat(filepath.Join(dir, lock)); err != nil {
				t.Fatalf("the killed commit left no %s: %v", lock, err)
			}
			res, err := Commit(dir, stateDir, "killed maybe", testNow)
			if err != nil {
				t.Fatalf("Commit after the kill: %v", err)
			}
			// Killed after the branch moved, the commit is made: the redone
			// run reports it rather than "no changes".
			if res.Hash != run(t, dir, "rev-parse", "HEAD") || res.Files != 1 || res.Committed[0] != "a.txt" {
				t.Fatalf("Commit after the kill = %+v; want HEAD with a.txt", res)
			}
			if n := run(t, dir, "rev-list", "--count", "HEAD"); n != "2" {
				t.Fatalf("%s commits; want 2 (one made, whoever made it)", n)
			}
			assertNoLocks(t, filepath.Join(dir, ".git"))
			if st := run(t, dir, "status", "--porcelain"); st != "" {
				t.Fatalf("git status after the redone commit:\n%s", st)
			}
			run(t, dir, "fsck", "--no-progress")
		})
	}
}

// Random kill -9 of a commit of a 1,000-file repository, 12 trials (bounded
// count; the delay only spreads the kills over the commit): the next Commit
// always succeeds, no lock or marker stays, git agrees the tree is clean.
func TestCommitKilledAnywhere(t *testing.T) {
	needGit(t)
	if testing.Short() {
		t.Skip("kill trials")
	}
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	for i := range 1000 {
		write(t, dir, fmt.Sprintf("d%d/f%d.txt", i%20, i), strconv.Itoa(i))
	}
	commitAll(t, dir)
	const trials = 12
	rng := rand.New(rand.NewPCG(21, 3))
	stranded := 0
	for trial := range trials {
		for i := range 50 {
			write(t, dir, fmt.Sprintf("d%d/f%d.txt", i%20, (trial*50+i)%1000), fmt.Sprintf("trial %d", trial))
		}
		killedCommit(t, dir, time.Duration(rng.IntN(40_000))*time.Microsecond)
		if _, err := Commit(dir, stateDir, "after kill "+strconv.Itoa(trial), testNow); err != nil {
			stranded++
			t.Errorf("trial %d: Commit after kill -9: %v", trial, err)
			os.Remove(filepath.Join(dir, ".git", "index.lock"))
			continue
		}
		assertNoLocks(t, filepath.Join(dir, ".git"))
		if st := run(t, dir, "status", "--porcelain"); st != "" {
			t.Fatalf("trial %d: not clean after the commit:\n%s", trial, st)
		}
	}
	run(t, dir, "fsck", "--no-progress")
	t.Logf("%d kill -9 trials, %d stranded", trials, stranded)
}

// Where hard links fail, the lock is git's plain exclusive create: it
// works, and an existing lock is a *LockError, untouched.
func TestTakeUnmarked(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "index")
	l, err := takeUnmarked(&ownLock{target: target, lock: target + ".lock"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := takeUnmarked(&ownLock{target: target, lock: target + ".lock"}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second take = %v; want ErrLocked", err)
	}
	commitThrough(t, l, target, dir)
}
