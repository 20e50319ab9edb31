package agent_test

import (
	"os"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/gitx/pin"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// A host is started in a directory that exists here: the task's worktree
// when this machine has it, else the project directory (a worker's agent
// of a task whose worktree is made from the remote by agent-run, after the
// spawn; a chdir into it would fail before the host ran).
func TestHostStartsInADirectoryThatExists(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	st := fsstate.New(s)
	var tk *store.Task
	if err := st.WithTasks(func() error {
		var err error
		tk, err = st.CreateTask(func(id string) (*store.Task, []byte, error) {
			return &store.Task{ID: id, Owner: "oak_0001", Status: store.TaskActive, BlockedBy: []string{}, CreatedAt: time.Now(),
				TaskGit: store.TaskGit{Worktree: &pin.Worktree{Path: "/elsewhere/.pm-worktrees/" + id, Branch: "refs/heads/pm/" + id, Remote: "origin"}},
				Repo:    &pin.Repo{WorkTree: "/elsewhere"}}, nil, nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(s, st, store.Agent{TaskID: tk.ID, Runtime: "exec", Prompt: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	fake := drivertest.New()
	l := &agent.Launcher{Store: s, State: st, Exe: "pm", Driver: fake}
	if err := l.Start(a.Name); err != nil {
		t.Fatal(err)
	}
	started := fake.Started()
	if len(started) != 1 {
		t.Fatalf("%d starts", len(started))
	}
	if fi, err := os.Stat(started[0].Dir); err != nil || !fi.IsDir() {
		t.Fatalf("the host starts in %q, which is no directory here (%v)", started[0].Dir, err)
	}
}
