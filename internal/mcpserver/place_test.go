package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/store"
)

func TestMain(m *testing.M) { os.Exit(hubtest.Main(m)) }

// hubSession is newSession with its records on a hub (one node), where a
// worker w1 is registered and live for the test's length.
func hubSession(t *testing.T) (*ops.Session, *natsstate.State) {
	t.Helper()
	h := hubtest.Single(t)
	sess := newSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := natsstate.Open(ctx, h.Connect(0), "mcp-000001")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	st.LeaseTTLWanted = time.Minute // the worker's key outlives the test
	if _, err := st.RegisterWorker(ctx, state.Worker{Name: "w1", Capacity: 2, LastSeen: time.Now()}); err != nil {
		t.Fatal(err)
	}
	sess.State = st
	sess.Launcher = &agent.Launcher{Store: sess.Store, State: st, Exe: "/nonexistent/pm"}
	return sess, st
}

// create_task places a task as pm task --on does (the one validation,
// task.Place): its schema has on; a live worker named there runs the
// owner; an unknown one is a tool error with its Try line, and nothing is
// made; a project with no workers refuses on.
func TestCreateTaskOnAWorker(t *testing.T) {
	sess, st := hubSession(t)
	_, cs := connect(t, sess, ToolsTasks, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != "create_task" {
			continue
		}
		schema, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(schema), `"on":{`) {
			t.Errorf("create_task's schema has no on: %s", schema)
		}
	}

	out, isErr := callTool(t, cs, "create_task", map[string]any{"description": "train the model", "runtime": "none", "on": "w1"})
	if isErr {
		t.Fatalf("create_task on w1: %s", out)
	}
	var tk store.Task
	if err := json.Unmarshal([]byte(out), &tk); err != nil || tk.Owner == "" {
		t.Fatalf("create_task: %q (%v)", out, err)
	}
	owner, err := st.Agent(tk.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if owner.Worker != "w1" {
		t.Fatalf("owner %s placed on %q, want w1", owner.Name, owner.Worker)
	}

	out, isErr = callTool(t, cs, "create_task", map[string]any{"description": "nowhere", "runtime": "none", "on": "w9"})
	if !isErr || !strings.Contains(out, "no live worker named w9") || !strings.Contains(out, "Try: pm workers") {
		t.Fatalf("create_task on w9: error %v, %q; want no live worker named w9 and Try: pm workers", isErr, out)
	}
	tasks, err := st.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("%d tasks after the refused create, want 1", len(tasks))
	}

	_, files := connect(t, newSession(t), ToolsTasks, nil)
	out, isErr = callTool(t, files, "create_task", map[string]any{"description": "here", "runtime": "none", "on": "w1"})
	if !isErr || !strings.Contains(out, "this project has no workers") {
		t.Fatalf("create_task on w1 in a project of files: error %v, %q", isErr, out)
	}
}

// create_subtask places a subtask as pm subtask --on does, through the
// same operation (ops.Subtask, task.Place): its schema has on, as the
// model tools' subtask has; a live worker named there runs the subtask's
// owner, wherever its parent's runs; an unknown one is a tool error with
// its Try line, and nothing is made.
func TestCreateSubtaskOnAWorker(t *testing.T) {
	sess, st := hubSession(t)
	if _, err := st.RegisterWorker(context.Background(), state.Worker{Name: "w2", Capacity: 2, LastSeen: time.Now()}); err != nil {
		t.Fatal(err)
	}
	model, ok := ops.LookupTool("subtask")
	if !ok {
		t.Fatal("no subtask model tool")
	}
	if schema := model.Schema(); !strings.Contains(string(schema), `"on":{`) {
		t.Errorf("the model tools' subtask schema has no on: %s", schema)
	}
	_, cs := connect(t, sess, ToolsTasks, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range tools.Tools {
		if tl.Name == "create_subtask" {
			found = true
			if schema, _ := json.Marshal(tl.InputSchema); !strings.Contains(string(schema), `"on":{`) {
				t.Errorf("create_subtask's schema has no on: %s", schema)
			}
		}
	}
	if !found {
		t.Fatal("no create_subtask tool")
	}

	out, isErr := callTool(t, cs, "create_task", map[string]any{"description": "train the model", "runtime": "none", "on": "w1"})
	if isErr {
		t.Fatalf("create_task on w1: %s", out)
	}
	var parent store.Task
	if err := json.Unmarshal([]byte(out), &parent); err != nil {
		t.Fatal(err)
	}
	out, isErr = callTool(t, cs, "create_subtask", map[string]any{"task": parent.ID, "description": "evaluate it", "on": "w2"})
	if isErr {
		t.Fatalf("create_subtask on w2: %s", out)
	}
	var res ops.SubtaskResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Task == nil {
		t.Fatalf("create_subtask: %q (%v)", out, err)
	}
	owner, err := st.Agent(res.Task.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if owner.Worker != "w2" || res.Task.ParentID != parent.ID {
		t.Fatalf("subtask %s (parent %s) owner placed on %q, want w2", res.Task.ID, res.Task.ParentID, owner.Worker)
	}

	out, isErr = callTool(t, cs, "create_subtask", map[string]any{"task": parent.ID, "description": "nowhere", "on": "w9"})
	if !isErr || !strings.Contains(out, "no live worker named w9") || !strings.Contains(out, "Try: pm workers") {
		t.Fatalf("create_subtask on w9: error %v, %q; want no live worker named w9 and Try: pm workers", isErr, out)
	}
	if tasks, err := st.Tasks(); err != nil || len(tasks) != 2 {
		t.Fatalf("%d tasks after the refused subtask, want 2 (%v)", len(tasks), err)
	}
}
