package agent

import (
	"os"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// WorkDir is where an agent of task taskID works: the task's worktree on
// this machine (the project's place in it), or the project directory for
// an agent with no task or a task with no worktree. The task is read
// through the records (on a hub, this machine has no task files).
func WorkDir(s *store.Store, st state.State, taskID string) string {
	if taskID == "" {
		return s.ProjectDir()
	}
	t, err := st.Task(taskID)
	if err != nil {
		return s.ProjectDir()
	}
	return t.WorkDir(s.ProjectDir())
}

// hostDir is where a host starts: its agent's WorkDir when that is here,
// else the project directory (a remote task's worktree is made on this
// machine by agent-run, after the start; the host's own work names WorkDir
// explicitly, never its working directory).
func hostDir(s *store.Store, st state.State, taskID string) string {
	dir := WorkDir(s, st, taskID)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir
	}
	return s.ProjectDir()
}
