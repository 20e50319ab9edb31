package task

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// remoteTasks is a project in a clone of a bare remote with n live tasks
// whose code goes through origin and whose worktrees are other machines'
// (none begun here): what Settle sees on a machine of a busy hub project.
func remoteTasks(t testing.TB, n int) (*store.Store, *agent.Launcher) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	bare := filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	git(t, root, "clone", "-q", bare, "clone")
	clone := filepath.Join(root, "clone")
	os.WriteFile(filepath.Join(clone, "README"), []byte("one\n"), 0o644)
	git(t, clone, "add", "-A")
	git(t, clone, "commit", "-qm", "initial")
	git(t, clone, "push", "-q", "origin", "HEAD:refs/heads/main")
	base := git(t, clone, "rev-parse", "HEAD")
	sroot, _, err := store.Init(clone, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(sroot)
	if err != nil {
		t.Fatal(err)
	}
	p, err := gitx.Locate(clone)
	if err != nil {
		t.Fatal(err)
	}
	st := fsstate.New(s)
	for range n {
		err := st.WithTasks(func() error {
			_, err := st.CreateTask(func(id string) (*store.Task, []byte, error) {
				tk := &store.Task{ID: id, Description: "elsewhere", Status: store.TaskActive, Runtime: "exec", CreatedAt: time.Now(), Repo: &p, BlockedBy: []string{}}
				tk.Worktree = &gitx.Worktree{Path: "/another/machine/.pm-worktrees/" + id, Branch: gitx.BranchPrefix + id, Base: base, Into: "refs/heads/main", Remote: "origin"}
				return tk, nil, nil
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s, &agent.Launcher{Store: s, State: st}
}

// BenchmarkSettle50RemoteTasks is one Settle on a machine of a project
// with 50 live tasks whose code goes through a git remote.
func BenchmarkSettle50RemoteTasks(b *testing.B) {
	s, l := remoteTasks(b, 50)
	for b.Loop() {
		if _, err := Settle(s, l, store.Human); err != nil {
			b.Fatal(err)
		}
	}
}
