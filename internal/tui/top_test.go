package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// fakeTop is one task with a subtask, a room, an agent and a request; its
// actions are recorded.
func fakeTop(did *[]string) TopBackend {
	ph := &store.Phase{ID: "ph-000001", TaskID: "tk-000001", Name: "design", MessageLimit: 10, Status: store.PhaseActive}
	d := TopData{
		Tasks: []*store.Task{{ID: "tk-000001", Status: store.TaskActive, Description: "Build a landing page"},
			{ID: "tk-000002", Status: store.TaskActive, Depth: 1, Description: "Write the copy"}},
		Health: map[string]task.Health{"tk-000001": {State: task.StateWorking, Requests: []string{"rq-000001"},
			Phase: &task.PhaseCount{ID: "ph-000001", Name: "design", Messages: 3, Limit: 10}}},
		Rooms: []Room{{Phase: ph, Count: 3, Last: []store.Message{{Author: "designer", Content: "hero first"},
			{Author: "critic", Content: "agreed"}}}},
		Agents: []*store.Agent{{Name: "owner-1", Status: "running", Runtime: "llm", Restarts: 1, Usage: store.Usage{Turns: 4, ToolCalls: 7, Tokens: 1200}},
			{Name: "owner-2", TaskID: "tk-000002", Status: store.AgentFailed, Runtime: "exec", Reason: "over its wall-time budget"},
			{Name: "elm-3", TaskID: "tk-000001", Status: store.AgentFailed, Runtime: "exec", Reason: "exit 1"}},
		Requests: []*request.Request{{ID: "rq-000001", From: "owner-1", Question: "Ship it?"},
			{ID: "rq-000002", From: "pm", Agent: "owner-2", TaskID: "tk-000002", Question: "Owner @owner-2 of task tk-000002 over its wall-time budget."}},
	}
	return TopBackend{
		Backend:  Backend{Answer: func(_ context.Context, id, text string) error { *did = append(*did, "answer "+id+" "+text); return nil }},
		Snapshot: func(context.Context) (TopData, error) { return d, nil },
		Kill: func(_ context.Context, task string, restart bool) error {
			*did = append(*did, map[bool]string{false: "kill ", true: "restart "}[restart]+task)
			return nil
		},
		EndPhase: func(_ context.Context, task string) error { *did = append(*did, "end "+task); return nil },
	}
}

func TestTopGolden(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var did []string
	tm := teatest.NewTestModel(t, NewTop(ctx, fakeTop(&did), time.UTC), teatest.WithInitialTermSize(80, 24))
	tm.Send(busMsg{cascadeEvents()[0]})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Write the copy")) },
		teatest.WithDuration(10*time.Second)) // the snapshot is in: keys act on its tasks
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("[y/N]")) },
		teatest.WithDuration(10*time.Second)) // hang guard only
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	golden.RequireEqual(t, []byte(tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).View()))
}

func TestTopKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys string
		want string
	}{
		{"kill confirmed", "ky", "kill tk-000001"},
		{"restart the subtask", "\x00ry", "restart tk-000002"},
		{"end phase", "ey", "end tk-000001"},
		{"cancelled", "kn", ""},
		{"answer", "aok\r", "answer rq-000001 ok"},
		// NEEDS YOU (tab): the selected request, and what a request about
		// a given-up owner is about, as the dashboard offers them.
		{"answer the selected request", "\t\x00aok\r", "answer rq-000002 ok"},
		{"try again", "\t\x00t", "answer rq-000002 try again"},
		{"restart from the request", "\t\x00ry", "restart tk-000002"},
		{"kill from the request", "\t\x00ky", "kill tk-000002"},
		{"a question has no try again", "\tt", ""},
		{"back to the tasks", "\t\tky", "kill tk-000001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var did []string
			m := NewTop(context.Background(), fakeTop(&did), time.UTC)
			m.Update(m.snapshot())
			for _, r := range tc.keys {
				k := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}
				switch r {
				case 0:
					k = tea.KeyMsg{Type: tea.KeyDown}
				case '\r':
					k = tea.KeyMsg{Type: tea.KeyEnter}
				case '\t':
					k = tea.KeyMsg{Type: tea.KeyTab}
				}
				if cmd := m.key(k); cmd != nil {
					cmd()
				}
			}
			if got := join(did); got != tc.want {
				t.Fatalf("did %q, want %q", got, tc.want)
			}
		})
	}
}

func join(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// NEEDS YOU lists the requests, then failed agents of live tasks that no
// request names (owner-2 has one); d dismisses a failed agent's item for
// this run of it, and the hint names only what applies.
func TestTopNeedsDismiss(t *testing.T) {
	var did []string
	m := NewTop(context.Background(), fakeTop(&did), time.UTC)
	m.Update(m.snapshot())
	names := func() string {
		var out []string
		for _, it := range m.needs() {
			if it.req != nil {
				out = append(out, it.req.ID)
			} else {
				out = append(out, "@"+it.agent.Name)
			}
		}
		return join(out)
	}
	if got := names(); got != "rq-000001, rq-000002, @elm-3" {
		t.Fatalf("needs %q", got)
	}
	press := func(k tea.KeyMsg) {
		if cmd := m.key(k); cmd != nil {
			cmd()
		}
	}
	press(tea.KeyMsg{Type: tea.KeyTab})
	press(tea.KeyMsg{Type: tea.KeyDown})
	if h := m.keysHint(); !strings.Contains(h, "t try again") {
		t.Fatalf("hint on a given-up owner's request: %q", h)
	}
	press(tea.KeyMsg{Type: tea.KeyDown})
	if h := m.keysHint(); !strings.Contains(h, "d dismiss") || strings.Contains(h, "answer") {
		t.Fatalf("hint on a failed agent: %q", h)
	}
	press(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("d")})
	if got := names(); got != "rq-000001, rq-000002" || len(did) != 0 {
		t.Fatalf("after d: needs %q, did %q", got, join(did))
	}
	m.Update(m.snapshot()) // a new snapshot keeps it dismissed
	if got := names(); got != "rq-000001, rq-000002" {
		t.Fatalf("after a snapshot: needs %q", got)
	}
}
