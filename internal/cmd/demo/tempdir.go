package demo

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// A temporary demo project is marked by a lock file beside it (DIR.lock,
// outside the repository the demo commits in), held while its demo runs.
// The next demo removes the directories of earlier demos whose lock is
// free: a person keeps the last demo to look around in, and /tmp does not
// fill with one directory per run.

// tempWorkspace sweeps the earlier demos' directories, then makes a new one
// and marks it as this running demo's.
func tempWorkspace() (string, error) {
	sweepDemos(os.TempDir())
	dir, err := os.MkdirTemp("", "pm-demo-")
	if err != nil {
		return "", err
	}
	// The lock is held for the life of the process: a Held has no
	// finalizer, and the kernel releases it at exit, however the demo ends.
	if _, ok, err := lockedfile.TryLock(dir); err != nil || !ok {
		return "", errors.Join(errors.New("pm demo: cannot mark its directory"), err)
	}
	return dir, nil
}

// sweepDemos removes the pm-demo-* directories under tmp that this user
// owns, that a demo marked, and whose demo no longer runs. Anything else
// (another user's, an unmarked directory, a running demo) is left alone.
func sweepDemos(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, "pm-demo-*"))
	for _, dir := range dirs {
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() || st.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
			continue
		}
		if _, err := os.Lstat(lockedfile.LockPath(dir)); err != nil {
			continue
		}
		h, ok, err := lockedfile.TryLock(dir)
		if err != nil || !ok {
			continue
		}
		if os.RemoveAll(dir) == nil {
			_ = os.Remove(lockedfile.LockPath(dir))
		}
		_ = h.Unlock()
	}
}
