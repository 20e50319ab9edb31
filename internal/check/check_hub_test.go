package check_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/check"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/store"
)

func TestMain(m *testing.M) { os.Exit(hubtest.Main(m)) }

// hubProject is a project directory whose records are project on h (its
// config names the hub), and those records; leases last a minute, so none
// expires while a test runs unless the test lets it.
func hubProject(t *testing.T, h *hubtest.Hubs, project string) (*store.Store, *natsstate.State) {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	cfg := `{"store": {"url": "` + h.URL(0) + `", "project": "` + project + `"}}`
	if err := os.WriteFile(root+"/config.json", []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := natsstate.Open(ctx, h.Connect(0), project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	st.LeaseTTLWanted = time.Minute
	return s, st
}

// hubTask records a task of status (its owner named owner) on st.
func hubTask(t *testing.T, st *natsstate.State, owner string, status store.TaskStatus, blockedBy ...string) *state.Task {
	t.Helper()
	var tk *state.Task
	err := st.WithTasks(func() error {
		var err error
		tk, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: "work of " + owner, Owner: owner, Status: status, BlockedBy: append([]string{}, blockedBy...), CreatedAt: time.Now()}, nil, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// pm doctor --check on a hub reads the hub's records: a task blocked only
// by a done task, written to the hub and to no file here, is found; an
// agent recorded running as a pid this machine does not run, whose lease
// a host holds (on another machine), is no finding.
func TestRunReadsTheHubsRecords(t *testing.T) {
	h := hubtest.Single(t)
	s, st := hubProject(t, h, "web-000001")
	blocker := hubTask(t, st, "oak_0001", state.TaskDone)
	blocked := hubTask(t, st, "elm_0002", state.TaskBlocked, blocker.ID)
	a := &state.Agent{Name: "elm_0002", TaskID: blocked.ID, Runtime: "exec", Status: store.AgentRunning, CreatedAt: time.Now()}
	a.Pid, a.PidStart = deadPid(t), 1
	if _, err := st.CreateAgent(a); err != nil {
		t.Fatal(err)
	}
	if _, err := st.HoldAgent(context.Background(), a.Name, "machine-b pid 4242"); err != nil {
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

// On a hub an agent's host may run on any machine: doctor reads the
// agent's lease, not a pid here. A run recorded running whose lease nobody
// holds is dead-running unless something starts it again (its live
// worker; any live worker when its own is gone), and live work placed on
// a worker is no-supervisor when no worker is live. Each finding names
// the worker, which pm doctor --fix leaves the repair to.
func TestRunReadsTheAgentsLeases(t *testing.T) {
	h := hubtest.Single(t)
	type want struct {
		kind   check.Kind
		worker string
	}
	tests := []struct {
		name   string
		status store.AgentStatus
		task   store.TaskStatus
		worker string   // where the agent is placed
		live   []string // workers registered and live
		held   bool     // a host holds the agent's lease
		want   []want
	}{
		{"a host holds the lease, its worker live", store.AgentRunning, state.TaskActive, "w1", []string{"w1"}, true, nil},
		{"a host holds the lease, no worker live to restart it", store.AgentRunning, state.TaskActive, "w1", nil, true, []want{{check.NoSupervisor, "w1"}}},
		{"lease free, its worker live: it respawns it", store.AgentRunning, state.TaskActive, "w1", []string{"w1"}, false, nil},
		{"lease free, its worker gone, another live: it takes it over", store.AgentRunning, state.TaskActive, "w1", []string{"w2"}, false, nil},
		{"lease free, its worker gone, none live", store.AgentRunning, state.TaskActive, "w1", nil, false,
			[]want{{check.DeadRunning, "w1"}, {check.NoSupervisor, "w1"}}},
		{"lease free, not wanted any more", store.AgentRunning, state.TaskDone, "w1", []string{"w1"}, false, []want{{check.DeadRunning, "w1"}}},
		{"never started, its worker gone, none live", store.AgentPending, state.TaskActive, "w1", nil, false, []want{{check.NoSupervisor, "w1"}}},
		{"never started, another worker live", store.AgentPending, state.TaskActive, "w1", []string{"w2"}, false, nil},
		// Placed on no worker, a run is any machine's supervisor's to
		// respawn: another machine's (the launcher's, say) is not seen
		// from here, so a wanted one is no finding (review: it was
		// dead-running whenever this machine ran no supervisor).
		{"placed on no worker, lease free, no supervisor here", store.AgentRunning, state.TaskActive, "", nil, false, nil},
		{"placed on no worker, a host holds the lease", store.AgentRunning, state.TaskActive, "", nil, true, nil},
		{"placed on no worker, lease free, not wanted any more", store.AgentRunning, state.TaskDone, "", nil, false, []want{{check.DeadRunning, ""}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, st := hubProject(t, h, fmt.Sprintf("lease-%06d", i))
			ctx := context.Background()
			for _, w := range tt.live {
				if _, err := st.RegisterWorker(ctx, state.Worker{Name: w, Capacity: 2, LastSeen: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			tk := hubTask(t, st, "oak_0001", tt.task)
			a := &state.Agent{Name: "oak_0001", TaskID: tk.ID, Runtime: "exec", Status: tt.status, Worker: tt.worker, CreatedAt: time.Now()}
			if tt.status == store.AgentRunning {
				a.Pid, a.PidStart = deadPid(t), 1
			}
			if _, err := st.CreateAgent(a); err != nil {
				t.Fatal(err)
			}
			if tt.held {
				if _, err := st.HoldAgent(ctx, a.Name, "machine-b pid 4242"); err != nil {
					t.Fatal(err)
				}
			}
			found, err := check.Run(s, st)
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, f := range found {
				if f.Subject != a.Name {
					t.Errorf("finding about %s: %v", f.Subject, f)
					continue
				}
				got = append(got, want{f.Kind, f.Worker})
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("found %v, want %v", found, tt.want)
			}
		})
	}
}

// A worker killed -9 with no other live: its agent's host held the lease
// (no dead-running while it does, only the live work nobody would
// restart); once the lease expires unrenewed (the hub's marker wakes the
// wait) the record saying running is dead-running too.
func TestRunSeesTheLeaseExpire(t *testing.T) {
	h := hubtest.Single(t)
	s, st := hubProject(t, h, "expire-000001")
	st.LeaseTTLWanted = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tk := hubTask(t, st, "oak_0001", state.TaskActive)
	a := &state.Agent{Name: "oak_0001", TaskID: tk.ID, Runtime: "exec", Status: store.AgentRunning, Worker: "w1", CreatedAt: time.Now()}
	a.Pid, a.PidStart = deadPid(t), 1
	if _, err := st.CreateAgent(a); err != nil {
		t.Fatal(err)
	}
	if _, err := st.HoldAgent(ctx, a.Name, "w1-host pid 4242"); err != nil {
		t.Fatal(err)
	}
	kinds := func() []check.Kind {
		t.Helper()
		found, err := check.Run(s, st)
		if err != nil {
			t.Fatal(err)
		}
		var out []check.Kind
		for _, f := range found {
			out = append(out, f.Kind)
		}
		return out
	}
	if got := kinds(); !slices.Equal(got, []check.Kind{check.NoSupervisor}) {
		t.Fatalf("lease held: %v, want only %s", got, check.NoSupervisor)
	}
	if err := st.WaitAgentFree(ctx, a.Name); err != nil { // never renewed: it expires
		t.Fatal(err)
	}
	if got := kinds(); !slices.Equal(got, []check.Kind{check.DeadRunning, check.NoSupervisor}) {
		t.Fatalf("lease expired: %v, want %s and %s", got, check.DeadRunning, check.NoSupervisor)
	}
}
