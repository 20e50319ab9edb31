package demo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// A new demo removes the finished demos' directories and leaves a running
// demo's, an unmarked directory and anything not named pm-demo-* alone.
func TestSweepDemos(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string, mark bool) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if mark {
			h, ok, err := lockedfile.TryLock(dir)
			if err != nil || !ok {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = h.Unlock() })
			if name != "pm-demo-running" {
				_ = h.Unlock()
			}
		}
		return dir
	}
	finished := mk("pm-demo-finished", true)
	running := mk("pm-demo-running", true)
	unmarked := mk("pm-demo-unmarked", false)
	other := mk("other-finished", true)

	sweepDemos(tmp)

	if _, err := os.Stat(lockedfile.LockPath(finished)); err == nil {
		t.Error("the finished demo's lock file stayed")
	}
	for dir, want := range map[string]bool{finished: false, running: true, unmarked: true, other: true} {
		_, err := os.Stat(dir)
		if got := err == nil; got != want {
			t.Errorf("%s exists %v, want %v", filepath.Base(dir), got, want)
		}
	}
}
