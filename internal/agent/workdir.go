package agent

import (
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
