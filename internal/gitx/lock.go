package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// pm's own git locks.
//
// git's lock protocol: X.lock is created exclusively, written, and renamed
// over X; a lock file left behind by a killed writer stops every git command
// that needs X until someone removes it, and git never removes one itself
// (it cannot tell a dead writer from a live one). pm done killed inside its
// commit left index.lock (or the branch's ref lock) behind this way.
//
// So pm marks the locks it writes: it first creates a marker file beside the
// lock, X.pm-PID-START-BOOT.lock, whose name says which process wrote it
// (pid, start time in clock ticks since boot, and the boot), and then makes
// X.lock a hard link to the marker: link(2) fails if X.lock exists, exactly
// like git's O_EXCL create, and from the first instant the lock exists it
// shares its inode with a marker naming its writer. A lock is pm's own when
// a marker in its directory is the same file; its writer is dead when that
// process no longer runs (another boot, no such pid, or a pid with another
// start time). Only such a lock is removed, and the commit redone. A lock
// no marker shares is another git process's (the user's, running or
// crashed): it is never touched. Markers end in ".lock", which git skips
// when it lists refs.
//
// Between pm processes, a commit holds flock(2) on the repository's
// directory (the common dir), so two pm done never break or take each
// other's locks; git does not use flock and is not affected.

// markerInfix separates the locked file's name from the writer in a marker.
const markerInfix = ".pm-"

// writerTag names this process for its markers: "PID-START-BOOT".
var writerTag = sync.OnceValue(func() string {
	h, _ := driver.Self()
	return strconv.Itoa(h.Pid) + "-" + strconv.FormatUint(h.PidStart, 10) + "-" + bootID()
})

// bootID is the first 8 hex digits of this boot's id ("0" when unknown): a
// pid and start time from another boot name no process of this one.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if s := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", ""); err == nil && len(s) >= 8 {
		return s[:8]
	}
	return "0"
}

// writerAlive reports whether the process a marker's tag names still runs.
func writerAlive(tag string) bool {
	parts := strings.Split(tag, "-")
	if len(parts) != 3 {
		return false // not a marker pm writes: its writer is no process
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 || parts[2] != bootID() {
		return false
	}
	if start == 0 {
		// The writer could not read its start time: its pid alone decides.
		return syscall.Kill(pid, 0) != syscall.ESRCH
	}
	return (&driver.Process{}).Alive(driver.Handle{Pid: pid, PidStart: start})
}

// LockError is a git lock pm cannot take: another git process's, or one a
// live pm process holds. It wraps ErrLocked.
type LockError struct {
	Path  string // the lock file
	PmPid int    // > 0: the pid of the live pm process that holds it
}

func (e *LockError) Error() string {
	if e.PmPid > 0 {
		return fmt.Sprintf("gitx: %s is held by pm process %d, which is committing", e.Path, e.PmPid)
	}
	return fmt.Sprintf("gitx: %s exists: another git process is using the repository", e.Path)
}

func (e *LockError) Unwrap() error { return ErrLocked }

// Try says what ends the lock.
func (e *LockError) Try() string {
	if e.PmPid > 0 {
		return fmt.Sprintf("wait for pm process %d to finish its commit, then try again", e.PmPid)
	}
	return fmt.Sprintf("if another git process is running, wait for it; if none is (it crashed), remove %s; then try again", e.Path)
}

// ownLock is a git lock file pm holds: lock and its marker are one inode.
type ownLock struct {
	target, lock, marker string
	f                    *os.File // open on the marker (the lock's content)
}

// takeLock takes target's lock (target + ".lock") the marked way; a lock
// left by a dead pm is removed first. The caller writes through l.f, then
// calls commit or abort.
func takeLock(target string) (*ownLock, error) {
	l := &ownLock{target: target, lock: target + ".lock", marker: target + markerInfix + writerTag() + ".lock"}
	for attempt := 0; ; attempt++ {
		// A marker of this very process is never left behind by it (abort
		// removes it), so one with our name is from a pid and start time
		// equal to ours in an earlier run: dead, and ours to replace.
		_ = os.Remove(l.marker)
		f, err := os.OpenFile(l.marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err != nil {
			return nil, fmt.Errorf("gitx: lock %s: %w", target, err)
		}
		err = os.Link(l.marker, l.lock)
		if err == nil {
			l.f = f
			sweepMarkers(target, nil) // best effort: markers of earlier, killed pms
			return l, nil
		}
		f.Close()
		os.Remove(l.marker)
		if !errors.Is(err, fs.ErrExist) {
			// A file system without hard links: git's own create, unmarked
			// (a pm killed holding it strands the lock, as git does).
			return takeUnmarked(l)
		}
		if attempt > 0 {
			return nil, &LockError{Path: l.lock}
		}
		if err := breakStale(target); err != nil {
			return nil, err
		}
	}
}

// takeUnmarked takes l's lock with git's exclusive create and no marker.
func takeUnmarked(l *ownLock) (*ownLock, error) {
	f, err := os.OpenFile(l.lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil, &LockError{Path: l.lock}
	}
	if err != nil {
		return nil, fmt.Errorf("gitx: lock %s: %w", l.target, err)
	}
	l.f, l.marker = f, ""
	return l, nil
}

// commit renames the written lock over its target and drops the marker.
func (l *ownLock) commit() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(l.lock, l.target); err != nil {
		return err
	}
	// Killed here, the marker stays linked to the new target: a stale
	// marker, which the next lock of it removes.
	if l.marker != "" {
		os.Remove(l.marker)
	}
	return nil
}

// abort gives the lock up without changing the target.
func (l *ownLock) abort() {
	l.f.Close()
	os.Remove(l.lock)
	if l.marker != "" {
		os.Remove(l.marker)
	}
}

// breakStale removes target's lock if pm wrote it and its writer is dead.
// A lock of another git process, or of a live pm, is a *LockError.
func breakStale(target string) error {
	lock := target + ".lock"
	lfi, err := os.Lstat(lock)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone meanwhile: take it again
	}
	if err != nil {
		return fmt.Errorf("gitx: lock %s: %w", target, err)
	}
	marker, tag, err := sweepMarkers(target, lfi)
	switch {
	case err != nil:
		return err
	case marker == "":
		return &LockError{Path: lock}
	case writerAlive(tag):
		pid, _ := strconv.Atoi(strings.SplitN(tag, "-", 2)[0])
		return &LockError{Path: lock, PmPid: pid}
	}
	// The lock first: a marker without a lock is harmless, a lock without
	// its marker would look like another git process's for good.
	if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitx: remove %s left by a pm that was killed: %w", lock, err)
	}
	os.Remove(marker)
	return nil
}

// sweepMarkers finds the marker of target's lock (lock: its stat, nil for
// none) and its writer's tag, and removes the markers of dead writers that
// no lock shares (left linked to the target by a pm killed after its
// rename). It leaves ours and the lock's own.
func sweepMarkers(target string, lock os.FileInfo) (marker, tag string, err error) {
	dir, prefix := filepath.Dir(target), filepath.Base(target)+markerInfix
	des, err := os.ReadDir(dir)
	if err != nil {
		return "", "", fmt.Errorf("gitx: lock %s: %w", target, err)
	}
	for _, de := range des {
		t, ok := strings.CutPrefix(de.Name(), prefix)
		if !ok || !strings.HasSuffix(t, ".lock") {
			continue
		}
		t = strings.TrimSuffix(t, ".lock")
		p := filepath.Join(dir, de.Name())
		if t == writerTag() {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && lock != nil && os.SameFile(lock, fi) {
			marker, tag = p, t
			continue
		}
		if !writerAlive(t) {
			os.Remove(p)
		}
	}
	return marker, tag, nil
}

// lockRepository holds flock(2) on dir (the repository's common directory)
// until the returned function runs: pm processes commit one at a time.
func lockRepository(dir string) (unlock func(), err error) {
	unlock, err = lockedfile.LockDirectory(dir)
	if err != nil {
		return nil, fmt.Errorf("gitx: lock repository: %w", err)
	}
	return unlock, nil
}

// ErrBusy: another pm process held the mirror of the remote (fetching or
// pushing) for all of this run's time.
var ErrBusy = errors.New("another pm process is using the git remote")

// lockMirror holds flock(2) on the lock file of pm's mirror of a remote
// (MIRROR.lock, beside it: lockedfile's) until the returned function runs:
// exclusive for a fetch, which writes the mirror's refs and may swap a
// fresh mirror in; shared for a push, which runs git in the mirror and
// writes nothing there. Two pm processes never swap mirrors over each
// other, nor remove the one the other's git runs in. It waits no longer
// than ctx, the deadline of the whole git run (a kill bounded by
// git.remote_timeout does not wait out another process's longer fetch,
// and what it waited is taken from its git's time); one still held then
// is ErrBusy.
func lockMirror(ctx context.Context, mirror string, how int) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(mirror), 0o700); err != nil {
		return nil, fmt.Errorf("gitx: lock %s: %w", mirror, err)
	}
	unlock, err = lockedfile.LockWithin(ctx, mirror, how)
	if ctx.Err() != nil && err != nil {
		return nil, &remoteError{kind: ErrBusy, err: fmt.Errorf("gitx: %s: another pm process held it (fetching or pushing) for all of this run's time", mirror)}
	}
	if err != nil {
		return nil, fmt.Errorf("gitx: lock %s: %w", mirror, err)
	}
	return unlock, nil
}
