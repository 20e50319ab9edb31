package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// GET /api/task?id= is one task with every phase, closed ones with their
// messages, its agents and the budgets.
func TestTaskDetail(t *testing.T) {
	r := newRig(t, nil)
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "build it", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 5, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: opened.Phase.ID, Message: "said in the first phase"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.EndPhase(t.Context(), r.sess, ops.EndInput{Task: tk.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Build", Limit: 5, Roles: []string{"developer"}}); err != nil {
		t.Fatal(err)
	}
	resp, b := r.do("GET", "/api/task?id="+tk.ID, "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/task = %d %s", resp.StatusCode, b)
	}
	var d struct {
		Task    store.Task     `json:"task"`
		Agents  []store.Agent  `json:"agents"`
		Health  map[string]any `json:"health"`
		Rooms   []ops.Room     `json:"rooms"`
		Budgets config.Budgets `json:"budgets"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Task.ID != tk.ID || len(d.Agents) != 3 || d.Health["state"] == nil || d.Budgets.Agent.MaxTurns == 0 {
		t.Errorf("detail = %s", b)
	}
	if len(d.Rooms) != 2 || d.Rooms[0].Phase.Status != store.PhaseClosed || d.Rooms[1].Phase.Name != "Build" {
		t.Fatalf("rooms = %+v", d.Rooms)
	}
	if m := d.Rooms[0].Messages; len(m) != 1 || m[0].Content != "said in the first phase" {
		t.Errorf("the closed phase's messages = %+v", m)
	}

	for _, tt := range []struct {
		query string
		want  int
	}{{"", 400}, {"?id=nonsense", 400}, {"?id=tk-999999", 404}} {
		if resp, b := r.do("GET", "/api/task"+tt.query, "", nil); resp.StatusCode != tt.want {
			t.Errorf("GET /api/task%s = %d %s; want %d", tt.query, resp.StatusCode, b, tt.want)
		}
	}
	if resp, _ := r.do("GET", "/api/task?id="+tk.ID, "", map[string]string{}); resp.StatusCode != 401 {
		t.Errorf("GET /api/task without the token = %d; want 401", resp.StatusCode)
	}
}

// The snapshot carries each task's health and the budgets.
func TestSnapshotHealthAndBudgets(t *testing.T) {
	r := newRig(t, nil)
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "manual", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	snap := r.snapshot()
	if h, ok := snap.Health[tk.ID]; !ok || h.State == "" {
		t.Errorf("health of %s = %+v", tk.ID, snap.Health)
	}
	if snap.Budgets != r.s.Config().Budgets {
		t.Errorf("budgets = %+v; want the config's %+v", snap.Budgets, r.s.Config().Budgets)
	}
}

// POST /api/stop stops a resident as the human (ops.Stop); a task's agent
// or an unknown name is refused with the CLI's error.
func TestStopResident(t *testing.T) {
	r := newRig(t, nil)
	res, err := agent.New(r.s, fsstate.New(r.s), store.Agent{Prompt: "greeter", Runtime: config.RuntimeLLM})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.sess.Launcher.Start(res.Name); err != nil {
		t.Fatal(err)
	}
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "owned", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		body string
		want int
	}{
		{"a task's agent", `{"name":"` + tk.Owner + `"}`, 409},
		{"never ran", `{"name":"nobody"}`, 404},
		{"not a name", `{"name":"../x"}`, 400},
	} {
		if resp, b := r.do("POST", "/api/stop", tt.body, nil); resp.StatusCode != tt.want {
			t.Errorf("%s: %d %s; want %d", tt.name, resp.StatusCode, b, tt.want)
		}
	}
	start := r.snapshot().Cursor.String()
	resp, b := r.do("POST", "/api/stop", `{"name":"`+res.Name+`"}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"stopped":true`) {
		t.Fatalf("stop: %d %s", resp.StatusCode, b)
	}
	if a, _ := r.s.Agent(res.Name); a.Status == store.AgentRunning {
		t.Fatalf("resident after stop: %s", a.Status)
	}
	c, _, err := r.dial(start, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ev := next(t, c); ev.Kind != string(bus.EvAgentKilled) || ev.Actor != "human" {
		t.Fatalf("stop on the bus as %+v; want agent.killed by human", ev)
	}
}

// Each message event carries its message-log line, nested under the call
// that caused it (internal/msglog), on the websocket and in the snapshot.
func TestEventsCarryLogLines(t *testing.T) {
	r := newRig(t, nil)
	start := r.snapshot().Cursor.String()
	r.s.Notify(bus.Event{Kind: bus.POKind("request"), Actor: "human", Agent: "coord", Text: "human → coord: map it", Data: bus.POMessage{Corr: "c1"}})
	r.s.Notify(bus.Event{Kind: bus.POKind("request"), Actor: "coord", Agent: "reader", Text: "coord → reader: list", Data: bus.POMessage{Corr: "c2", Cause: "c1"}})
	r.s.Notify(bus.Event{Kind: bus.EvToolCall, Actor: "reader", Text: `list_files {}`, Data: bus.ToolCall{Cause: "c2"}})
	r.s.Notify(bus.Event{Kind: bus.EvTaskDone, Actor: "reader"})
	want := []string{
		`{"from":"human","to":"coord","text":"map it","depth":0}`,
		`{"from":"coord","to":"reader","text":"list","depth":1}`,
		`{"from":"reader","to":"list_files","text":"{}","depth":2,"primitive":true}`,
		``,
	}
	c, _, err := r.dial(start, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, w := range want {
		_ = c.SetReadDeadline(deadline())
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Line json.RawMessage `json:"line"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if string(m.Line) != w {
			t.Errorf("event %d: line %s; want %s", i, m.Line, w)
		}
	}
	snap := r.snapshot()
	var lines []string
	for _, e := range snap.Log {
		if e.Line != nil {
			lines = append(lines, e.Line.From+">"+e.Line.To)
		}
	}
	if strings.Join(lines, " ") != "human>coord coord>reader reader>list_files" {
		t.Errorf("snapshot log lines = %v", lines)
	}
}
