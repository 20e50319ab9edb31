package check_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/check"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/store"
)

func TestMain(m *testing.M) { os.Exit(hubtest.Main(m)) }

// pm doctor --check on a hub reads the hub's records: a task blocked only
// by a done task, written to the hub and to no file here, is found; an
// agent recorded running as a pid this machine does not run (its host may
// be another machine's) is no finding.
func TestRunReadsTheHubsRecords(t *testing.T) {
	h := hubtest.Single(t)
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	cfg := `{"store": {"url": "` + h.URL(0) + `", "project": "web-000001"}}`
	if err := os.WriteFile(root+"/config.json", []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := natsstate.Open(ctx, h.Connect(0), "web-000001")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var blocker, blocked *state.Task
	err = st.WithTasks(func() error {
		var err error
		if blocker, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: "first", Owner: "oak_0001", Status: state.TaskDone, BlockedBy: []string{}, CreatedAt: time.Now()}, nil, nil
		}); err != nil {
			return err
		}
		blocked, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: "after", Owner: "elm_0002", Status: state.TaskBlocked, BlockedBy: []string{blocker.ID}, CreatedAt: time.Now()}, nil, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &state.Agent{Name: "elm_0002", TaskID: blocked.ID, Runtime: "exec", Status: store.AgentRunning, CreatedAt: time.Now()}
	a.Pid, a.PidStart = deadPid(t), 1
	if _, err := st.CreateAgent(a); err != nil {
		t.Fatal(err)
	}
	found, err := check.Run(s, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Kind != check.BlockedByDone || found[0].Subject != blocked.ID {
		t.Fatalf("found %v, want only %s %s", found, check.BlockedByDone, blocked.ID)
	}
}
