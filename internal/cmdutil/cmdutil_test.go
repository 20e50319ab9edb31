package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	s := storetest.New(t)
	return s
}

var base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func addTask(t *testing.T, s *store.Store, id, status string, age int) *store.Task {
	t.Helper()
	tk := &store.Task{ID: id, Description: id, Owner: "own_" + id[3:7], Status: status, BlockedBy: []string{}, CreatedAt: base.Add(time.Duration(age) * time.Minute)}
	if err := s.WriteTask(tk); err != nil {
		t.Fatal(err)
	}
	return tk
}

func addPhase(t *testing.T, s *store.Store, taskID, id, status string, age int) *store.Phase {
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
	var b bytes.Buffer
	if err := PrintJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func agentActor(name, taskID, phaseID, role string) store.Actor {
	return store.Actor{Name: name, Agent: &store.Agent{Name: name, TaskID: taskID, PhaseID: phaseID, Role: role}}
}

func TestTask(t *testing.T) {
	tests := []struct {
		name   string
		tasks  map[string]string // id -> status
		actor  store.Actor
		flag   string
		wantID string
		code   errs.Code
	}{
		{name: "flag wins", tasks: map[string]string{"tk-000001": store.TaskActive, "tk-000002": store.TaskActive}, flag: "tk-000002", actor: agentActor("a", "tk-000001", "", ""), wantID: "tk-000002"},
		{name: "flag unknown", flag: "tk-999999", actor: store.Human, code: errs.NotFound},
		{name: "flag malformed", flag: "nope", actor: store.Human, code: errs.Usage},
		{name: "agent's own task", tasks: map[string]string{"tk-000001": store.TaskActive, "tk-000002": store.TaskDone}, actor: agentActor("a", "tk-000002", "", ""), wantID: "tk-000002"},
		{name: "human, only active task", tasks: map[string]string{"tk-000001": store.TaskDone, "tk-000002": store.TaskActive, "tk-000003": store.TaskBlocked}, actor: store.Human, wantID: "tk-000002"},
		{name: "human, no active task", tasks: map[string]string{"tk-000001": store.TaskDone}, actor: store.Human, code: errs.State},
		{name: "human, two active tasks", tasks: map[string]string{"tk-000001": store.TaskActive, "tk-000002": store.TaskActive}, actor: store.Human, code: errs.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			for id, st := range tt.tasks {
				addTask(t, s, id, st, 0)
			}
			got, err := Task(s, tt.actor, tt.flag)
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
	_, err := Task(s, store.Human, "")
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
		err := Owner(tt.actor, tk)
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
			got, err := Phase(s, tt.actor, tt.flag)
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

func testFactory(env map[string]string, wd string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := New(context.Background(), strings.NewReader(""), out, errOut)
	f.Getenv = func(k string) string { return env[k] }
	f.Environ = func() []string { return nil }
	f.Getwd = func() (string, error) { return wd, nil }
	return f, out, errOut
}

func TestFactoryStore(t *testing.T) {
	project := t.TempDir()
	root, _, err := store.Init(project, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(project, "src", "pkg")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	f, _, errOut := testFactory(nil, deep)
	f.Now = func() time.Time { return fixed }
	s, err := f.Store()
	if err != nil || s.Root != root {
		t.Fatalf("Store from a subdirectory = %v, %v; want %s", s, err, root)
	}
	if !s.Now().Equal(fixed) {
		t.Error("the store does not use the factory's clock")
	}
	s.Warnf("hello")
	if !strings.Contains(errOut.String(), "hello") {
		t.Error("the store's warnings do not go to the factory's stderr")
	}

	f, _, _ = testFactory(map[string]string{"PM_HOME": root}, elsewhere)
	if s, err := f.Store(); err != nil || s.Root != root {
		t.Fatalf("Store with PM_HOME = %v, %v", s, err)
	}
	f, _, _ = testFactory(nil, elsewhere)
	if _, err := f.Store(); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Store with no state dir = %v, want exit 4", err)
	}
	f, _, _ = testFactory(map[string]string{"PM_HOME": filepath.Join(elsewhere, ".plasmodium")}, deep)
	if _, err := f.Store(); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Store with PM_HOME naming nothing = %v, want exit 4", err)
	}
	f, _, _ = testFactory(nil, deep)
	f.Getwd = func() (string, error) { return "", errors.New("no cwd") }
	if _, err := f.Store(); err == nil {
		t.Fatal("Store without a working directory succeeded")
	}
}

func TestFactoryActor(t *testing.T) {
	s := newStore(t)
	if err := s.WriteAgent(&store.Agent{Name: "oak_0001", TaskID: "tk-000001", Role: "qa", Status: store.AgentRunning}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent string
		want  string
		human bool
		code  errs.Code
	}{
		{agent: "", want: "human", human: true},
		{agent: "human", want: "human", human: true},
		{agent: "oak_0001", want: "oak_0001"},
		{agent: "elm_0009", code: errs.NotFound},
		{agent: "../x", code: errs.Usage},
	}
	for _, tt := range tests {
		f, _, _ := testFactory(map[string]string{"PM_AGENT": tt.agent}, t.TempDir())
		a, err := f.Actor(s)
		if tt.code != 0 {
			if errs.CodeOf(err) != tt.code || !strings.Contains(err.Error(), "PM_AGENT") {
				t.Errorf("Actor(%q) = %+v, %v; want exit %d naming PM_AGENT", tt.agent, a, err, tt.code)
			}
			continue
		}
		if err != nil || a.Name != tt.want || a.IsHuman() != tt.human {
			t.Errorf("Actor(%q) = %+v, %v", tt.agent, a, err)
		}
		if !tt.human && (a.Agent == nil || a.Role() != "qa") {
			t.Errorf("Actor(%q) lost its record: %+v", tt.agent, a.Agent)
		}
	}
}

func TestPrintMessage(t *testing.T) {
	ts := time.Date(2024, 1, 1, 12, 34, 56, 0, time.Local)
	tests := []struct {
		m    store.Message
		want string
	}{
		{store.Message{Author: "human", Content: "hi", Timestamp: ts}, "[12:34:56] human: hi\n"},
		{store.Message{Author: "oak_0001", Role: "qa", Content: "a\nb", Timestamp: ts}, "[12:34:56] @oak_0001 (qa): a\n    b\n"},
		{store.Message{Author: "oak_0001", Content: "x", Timestamp: ts}, "[12:34:56] @oak_0001: x\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		PrintMessage(&b, tt.m)
		if b.String() != tt.want {
			t.Errorf("PrintMessage = %q, want %q", b.String(), tt.want)
		}
	}
}

func TestPhaseLine(t *testing.T) {
	tests := []struct {
		p     store.Phase
		count int
		want  string
	}{
		{store.Phase{ID: "ph-000001", Name: "Design", Status: store.PhaseActive, MessageLimit: 10, Roles: []string{"designer", "qa"}}, 3,
			`ph-000001 "Design" active 3/10 roles designer,qa`},
		{store.Phase{ID: "ph-000002", Name: "X", Status: store.PhaseClosed, MessageLimit: 2, CloseReason: store.CloseLimit}, 2,
			`ph-000002 "X" closed 2/2 (limit)`},
	}
	for _, tt := range tests {
		if got := PhaseLine(&tt.p, tt.count); got != tt.want {
			t.Errorf("PhaseLine = %q, want %q", got, tt.want)
		}
	}
}

func TestPrintJSON(t *testing.T) {
	var b bytes.Buffer
	if err := PrintJSON(&b, map[string]int{"a": 1}); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("PrintJSON = %q, %v", b.String(), err)
	}
	b.Reset()
	if err := PrintJSONLine(&b, map[string]string{"a": "x\ny"}); err != nil || b.String() != "{\"a\":\"x\\ny\"}\n" {
		t.Fatalf("PrintJSONLine = %q, %v", b.String(), err)
	}
}
