package statetest

import (
	"testing"

	"github.com/plasmodium/pm/internal/state"
)

// OpenRoom makes a task owned by owner with an active phase of limit
// messages: a room to say into, for a test of any backend.
func OpenRoom(t testing.TB, st state.State, owner string, limit int) (*state.Task, *state.Phase) {
	t.Helper()
	var tk *state.Task
	err := st.WithTasks(func() error {
		var err error
		tk, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: "a room", Owner: owner, Status: state.TaskActive, BlockedBy: []string{}}, nil, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ph, err := st.CreatePhase(tk.ID, func(_ *state.Task, _ []*state.Phase, id string) (*state.Phase, error) {
		return &state.Phase{ID: id, TaskID: tk.ID, Name: "talk", MessageLimit: limit, Roles: []string{}, Status: state.PhaseActive}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tk, ph
}
