package statetest

import (
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/state"
)

// OwnedTask makes an active task described desc whose owner is owner: the
// task names it, and owner's record is written with the task's id.
func OwnedTask(t testing.TB, st state.State, desc string, owner *state.Agent) *state.Task {
	t.Helper()
	var tk *state.Task
	err := st.WithTasks(func() error {
		var err error
		tk, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: desc, Status: state.TaskActive, Runtime: owner.Runtime, Owner: owner.Name,
				CreatedAt: time.Now(), BlockedBy: []string{}}, nil, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	owner.TaskID = tk.ID
	if _, err := st.CreateAgent(owner); err != nil {
		t.Fatal(err)
	}
	return tk
}
