package ops

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	s := storetest.New(t)
	return s
}

var base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func addTask(t *testing.T, s *store.Store, id string, status store.TaskStatus, age int) *store.Task {
	t.Helper()
	tk := &store.Task{ID: id, Description: id, Owner: "own_" + id[3:7], Status: status, BlockedBy: []string{}, CreatedAt: base.Add(time.Duration(age) * time.Minute)}
	if err := s.WriteTask(tk); err != nil {
		t.Fatal(err)
	}
	return tk
}

func addPhase(t *testing.T, s *store.Store, taskID, id string, status store.PhaseStatus, age int) *store.Phase {
	t.Helper()
	ph := &store.Phase{ID: id, TaskID: taskID, Name: "P " + id, MessageLimit: 5, Status: status, CreatedAt: base.Add(time.Duration(age) * time.Minute)}
	if err := os.MkdirAll(s.PhaseDir(taskID, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.PhasePath(taskID, id), mustJSON(t, ph), 0o644); err != nil {
		t.Fatal(err)
	}
	return ph
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func agentActor(name, taskID, phaseID, role string) store.Actor {
	return store.Actor{Name: name, Agent: &store.Agent{Name: name, TaskID: taskID, PhaseID: phaseID, Role: role}}
}

func TestTask(t *testing.T) {
	tests := []struct {
		name   string
		tasks  map[string]store.TaskStatus // id -> status
		actor  store.Actor
		flag   string
		wantID string
		code   errs.Code
	}{
		{name: "flag wins", tasks: map[string]store.TaskStatus{"tk-000001": store.TaskActive, "tk-000002": store.TaskActive}, flag: "tk-000002", actor: agentActor("a", "tk-000001", "", ""), wantID: "tk-000002"},
		{name: "flag unknown", flag: "tk-999999", actor: store.Human, code: errs.NotFound},
		{name: "flag malformed", flag: "nope", actor: store.Human, code: errs.Usage},
		{name: "agent's own task", tasks: map[string]store.TaskStatus{"tk-000001": store.TaskActive, "tk-000002": store.TaskDone}, actor: agentActor("a", "tk-000002", "", ""), wantID: "tk-000002"},
		{name: "human, only active task", tasks: map[string]store.TaskStatus{"tk-000001": store.TaskDone, "tk-000002": store.TaskActive, "tk-000003": store.TaskBlocked}, actor: store.Human, wantID: "tk-000002"},
		{name: "human, no active task", tasks: map[string]store.TaskStatus{"tk-000001": store.TaskDone}, actor: store.Human, code: errs.State},
		{name: "human, two active tasks", tasks: map[string]store.TaskStatus{"tk-000001": store.TaskActive, "tk-000002": store.TaskActive}, actor: store.Human, code: errs.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			for id, st := range tt.tasks {
				addTask(t, s, id, st, 0)
			}
			got, err := ResolveTask(s, fsstate.New(s), tt.actor, tt.flag)
			if tt.code != 0 {
				if errs.CodeOf(err) != tt.code {
					t.Fatalf("Task = %+v, %v; want exit %d", got, err, tt.code)
				}
				return
			}
			if err != nil || got.ID != tt.wantID {
				t.Fatalf("Task = %+v, %v; want %s", got, err, tt.wantID)
			}
		})
	}
}

func TestTwoActiveTasksNamesThem(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive, 0)
	addTask(t, s, "tk-000002", store.TaskActive, 1)
	_, err := ResolveTask(s, fsstate.New(s), store.Human, "")
	if try := errs.TryOf(err); !strings.Contains(try, "tk-000001") || !strings.Contains(try, "tk-000002") {
		t.Fatalf("Try %q does not list the candidates", try)
	}
}

func TestOwner(t *testing.T) {
	tk := &store.Task{ID: "tk-000001", Owner: "oak_0001"}
	tests := []struct {
		actor store.Actor
		ok    bool
	}{
		{store.Human, true},
		{agentActor("oak_0001", "tk-000001", "", ""), true},
		{agentActor("elm_0002", "tk-000001", "ph-000001", "qa"), false},
	}
	for _, tt := range tests {
		err := CheckOwner(tt.actor, tk)
		if (err == nil) != tt.ok {
			t.Errorf("Owner(%s) = %v, want ok=%v", tt.actor.Name, err, tt.ok)
		}
		if err != nil && errs.CodeOf(err) != errs.State {
			t.Errorf("Owner refusal has exit %d, want 5", errs.CodeOf(err))
		}
	}
}

func TestPhase(t *testing.T) {
	type setup func(t *testing.T, s *store.Store)
	twoTasks := func(t *testing.T, s *store.Store) {
		addTask(t, s, "tk-000001", store.TaskActive, 0)
		addTask(t, s, "tk-000002", store.TaskActive, 1)
		addPhase(t, s, "tk-000001", "ph-000011", store.PhaseClosed, 0)
		addPhase(t, s, "tk-000001", "ph-000012", store.PhaseActive, 1)
	}
	tests := []struct {
		name   string
		setup  setup
		actor  store.Actor
		flag   string
		wantID string
		code   errs.Code
	}{
		{name: "flag finds any phase", setup: twoTasks, actor: store.Human, flag: "ph-000011", wantID: "ph-000011"},
		{name: "flag unknown", setup: twoTasks, actor: store.Human, flag: "ph-999999", code: errs.NotFound},
		{name: "flag malformed", setup: twoTasks, actor: store.Human, flag: "tk-000001", code: errs.Usage},
		{name: "role agent's own phase, even closed", setup: twoTasks, actor: agentActor("r", "tk-000001", "ph-000011", "qa"), wantID: "ph-000011"},
		{name: "owner: the active phase", setup: twoTasks, actor: agentActor("o", "tk-000001", "", ""), wantID: "ph-000012"},
		{name: "owner with no phase yet", setup: twoTasks, actor: agentActor("o", "tk-000002", "", ""), code: errs.State},
		{name: "owner: the last phase once all closed", setup: func(t *testing.T, s *store.Store) {
			addTask(t, s, "tk-000001", store.TaskActive, 0)
			addPhase(t, s, "tk-000001", "ph-000021", store.PhaseClosed, 0)
			addPhase(t, s, "tk-000001", "ph-000022", store.PhaseClosed, 5)
		}, actor: agentActor("o", "tk-000001", "", ""), wantID: "ph-000022"},
		{name: "human: the only active phase", setup: twoTasks, actor: store.Human, wantID: "ph-000012"},
		{name: "human: none active", setup: func(t *testing.T, s *store.Store) {
			addTask(t, s, "tk-000001", store.TaskActive, 0)
			addPhase(t, s, "tk-000001", "ph-000011", store.PhaseClosed, 0)
		}, actor: store.Human, code: errs.State},
		{name: "human: two active", setup: func(t *testing.T, s *store.Store) {
			twoTasks(t, s)
			addPhase(t, s, "tk-000002", "ph-000031", store.PhaseActive, 2)
		}, actor: store.Human, code: errs.Usage},
		{name: "human: phases of finished tasks do not count", setup: func(t *testing.T, s *store.Store) {
			twoTasks(t, s)
			addTask(t, s, "tk-000003", store.TaskDone, 2)
			addPhase(t, s, "tk-000003", "ph-000041", store.PhaseActive, 2)
		}, actor: store.Human, wantID: "ph-000012"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			tt.setup(t, s)
			got, err := phase.Resolve(s, fsstate.New(s), tt.actor, tt.flag)
			if tt.code != 0 {
				if errs.CodeOf(err) != tt.code {
					t.Fatalf("Phase = %+v, %v; want exit %d", got, err, tt.code)
				}
				return
			}
			if err != nil || got.ID != tt.wantID {
				t.Fatalf("Phase = %+v, %v; want %s", got, err, tt.wantID)
			}
		})
	}
}
