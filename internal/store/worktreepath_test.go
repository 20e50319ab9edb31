package store

import (
	"path/filepath"
	"testing"

	"github.com/plasmodium/pm/internal/gitx/pin"
)

// A remote task's worktree on this machine is derived from its id, never
// from the path another machine recorded (a record on the hub that ends in
// ".." would otherwise name the project directory itself).
func TestRemoteWorktreePathIsDerived(t *testing.T) {
	project := t.TempDir()
	for _, recorded := range []string{"/elsewhere/.pm-worktrees/tk-000001", "/elsewhere/.pm-worktrees/..", "/", ".."} {
		tk := &Task{ID: "tk-000001", TaskGit: TaskGit{Worktree: &pin.Worktree{Path: recorded, Remote: "origin"}}}
		want := filepath.Join(realDir(t, project), WorktreesDir, "tk-000001")
		if got := tk.WorktreePath(project); got != want {
			t.Errorf("recorded %q: WorktreePath = %q, want %q", recorded, got, want)
		}
	}
}

func realDir(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
