package check_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/check"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

func newStore(t *testing.T) (*store.Store, *agent.Launcher) {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return s, &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/nonexistent/pm"}
}

func kinds(t *testing.T, s *store.Store) []check.Kind {
	t.Helper()
	// Through the opener, as pm doctor --check: the backend's own check
	// of its caches must be reachable behind what Open returns.
	st, err := stateopen.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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

// Each state only a crash leaves is found, with its kind; a state at rest
// that no crash touched has no finding.
func TestRunFindsWhatACrashLeaves(t *testing.T) {
	for _, c := range []struct {
		name  string
		leave func(t *testing.T, s *store.Store, l *agent.Launcher)
		want  []check.Kind
	}{
		{"clean", func(*testing.T, *store.Store, *agent.Launcher) {}, nil},
		// A room whose log holds its limit is closed for every reader
		// (store.RoomClosedBy), phase.json saying active or not: nothing
		// stranded to report. RoomAtLimit stays the guard should a reader
		// ever see such a room active again.
		{"room at its limit, phase.json left active", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			tk := mkTask(t, s, l)
			ph, err := phase.Create(s, fsstate.New(s), store.Human, phase.Spec{TaskID: tk.ID, Name: "Talk", Limit: 2, Roles: []string{"designer"}})
			if err != nil {
				t.Fatal(err)
			}
			// Two messages in the log; the say that appended the second
			// was killed before it closed the room.
			log := `{"id":"m-000001","phase_id":"` + ph.ID + `","author":"human","content":"one","timestamp":"2026-01-01T00:00:00Z"}` + "\n" +
				`{"id":"m-000002","phase_id":"` + ph.ID + `","author":"human","content":"two","timestamp":"2026-01-01T00:00:01Z"}` + "\n"
			if err := os.WriteFile(s.MessagesPath(tk.ID, ph.ID), []byte(log), 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"blocked only by done tasks", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			a := mkTask(t, s, l)
			b, err := task.Create(s, l, store.Human, task.Spec{Description: "after", Runtime: "none", BlockedBy: []string{a.ID}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpdateTask(a.ID, func(x *store.Task) error { x.Status = store.TaskDone; return nil }); err != nil {
				t.Fatal(err)
			}
			_ = b
		}, []check.Kind{check.BlockedByDone}},
		{"owner recorded running past done, host gone", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			tk := mkTask(t, s, l)
			recordDeadRun(t, s, tk.Owner)
			if _, err := s.UpdateTask(tk.ID, func(x *store.Task) error { x.Status = store.TaskDone; return nil }); err != nil {
				t.Fatal(err)
			}
		}, []check.Kind{check.DeadRunning}},
		{"the task index disagrees with a record", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			tk := mkTask(t, s, l)
			if _, err := s.Tasks(); err != nil { // builds the index whole
				t.Fatal(err)
			}
			if _, _, _, err := s.TaskCounts(); err != nil {
				t.Fatal(err)
			}
			if err := s.RepairTaskIndex(); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(s.Root, "task-index", "live", tk.ID)); err != nil {
				t.Fatal(err)
			}
		}, []check.Kind{check.Index}},
		{"live work and no supervisor", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			tk := mkTask(t, s, l)
			recordDeadRun(t, s, tk.Owner)
			if err := s.MarkSupervisorWanted(); err != nil {
				t.Fatal(err)
			}
		}, []check.Kind{check.DeadRunning, check.NoSupervisor}},
		{"the marker alone strands nothing", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			if err := s.MarkSupervisorWanted(); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"an owner never started, no supervisor", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			tk := mkTask(t, s, l)
			if _, err := s.UpdateAgent(tk.Owner, func(a *store.Agent) error { a.Runtime = "exec"; return nil }); err != nil {
				t.Fatal(err)
			}
		}, []check.Kind{check.NoSupervisor}},
		{"an unreadable agent record", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			tk := mkTask(t, s, l)
			if err := os.WriteFile(s.AgentPath(tk.Owner), []byte(`{"name": "x`), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []check.Kind{check.Unreadable}},
		{"a git index.lock nobody holds", func(t *testing.T, s *store.Store, l *agent.Launcher) {
			git := filepath.Join(s.ProjectDir(), ".git")
			if err := os.MkdirAll(git, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(git, "index.lock"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []check.Kind{check.GitLock}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, l := newStore(t)
			c.leave(t, s, l)
			if got := kinds(t, s); !slices.Equal(got, c.want) {
				found, _ := check.Run(s, fsstate.New(s))
				t.Fatalf("kinds %v, want %v: %v", got, c.want, found)
			}
		})
	}
}

func mkTask(t *testing.T, s *store.Store, l *agent.Launcher) *store.Task {
	t.Helper()
	tk, err := task.Create(s, l, store.Human, task.Spec{Description: "work", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func deadPid(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}

// recordDeadRun records the agent name as a running exec agent whose process is gone
// (its host killed -9 while nobody watched).
func recordDeadRun(t *testing.T, s *store.Store, name string) {
	t.Helper()
	if _, err := s.UpdateAgent(name, func(a *store.Agent) error {
		a.Runtime, a.Status, a.Pid, a.PidStart = "exec", store.AgentRunning, deadPid(t), 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// On a hub, Run checks the records (a task blocked only by done tasks is
// found) and not what needs the machine a record's host or worktree is on:
// an agent recorded running whose pid is not this machine's, and live work
// with no supervisor here, are no finding there; NotChecked says so. The
// records stay the files' (fsstate) so the one state is checked both ways.
func TestRunOnAHub(t *testing.T) {
	s, l := newStore(t)
	live := mkTask(t, s, l)
	recordDeadRun(t, s, live.Owner)
	a := mkTask(t, s, l)
	if _, err := task.Create(s, l, store.Human, task.Spec{Description: "after", Runtime: "none", BlockedBy: []string{a.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateTask(a.ID, func(x *store.Task) error { x.Status = store.TaskDone; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkSupervisorWanted(); err != nil {
		t.Fatal(err)
	}
	if want := []check.Kind{check.BlockedByDone, check.DeadRunning, check.NoSupervisor}; !slices.Equal(kinds(t, s), want) {
		t.Fatalf("on files: kinds %v, want %v", kinds(t, s), want)
	}
	if got := check.NotChecked(s); got != nil {
		t.Fatalf("on files, not checked: %v", got)
	}

	cfg := `{"store": {"url": "nats://127.0.0.1:4222", "project": "web-000001"}}`
	if err := os.WriteFile(s.ConfigPath(), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	hub, err := store.Open(s.Root)
	if err != nil || !hub.OnHub() {
		t.Fatalf("reopened on a hub: %v, %v", hub.OnHub(), err)
	}
	found, err := check.Run(hub, fsstate.New(hub))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Kind != check.BlockedByDone {
		t.Fatalf("on a hub: %v, want only %s", found, check.BlockedByDone)
	}
	if got := check.NotChecked(hub); len(got) != 3 {
		t.Fatalf("on a hub, not checked: %v", got)
	}
}
