package dashboard

import (
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// A room of the snapshot says when it last moved and who is typing: the
// role agents whose turn is in flight (running, activity "working", as the
// llm runtime records it); one that waits is not typing (issue 25).
func TestSnapshotRoomLiveness(t *testing.T) {
	r := newRig(t, nil)
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "talk it over", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 10, Roles: []string{"designer", "developer"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: opened.Phase.ID, Message: "go"}); err != nil {
		t.Fatal(err)
	}
	designer, developer := opened.Phase.Agents[0], opened.Phase.Agents[1]
	now := time.Now().UTC()
	for name, activity := range map[string]string{designer: "working", developer: "waiting"} {
		if _, err := r.s.UpdateAgent(name, func(a *store.Agent) error {
			a.Status, a.Activity, a.ActiveAt, a.StartedAt = store.AgentRunning, activity, &now, &now
			a.Handle = selfHandle(t) // alive: this process
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	r.s.Now = func() time.Time { return time.Now().Add(3 * time.Minute) } // the server's clock: still for 3m

	snap := r.snapshot()
	if len(snap.Rooms) != 1 {
		t.Fatalf("rooms %+v", snap.Rooms)
	}
	room := snap.Rooms[0]
	if len(room.Typing) != 1 || room.Typing[0].Name != designer || room.Typing[0].Role != "designer" || room.Typing[0].Since == nil {
		t.Errorf("typing = %+v, want only @%s (designer)", room.Typing, designer)
	}
	if room.LastActivity.IsZero() || room.IdleSeconds < 170 || room.IdleSeconds > 600 {
		t.Errorf("last activity %v, idle %ds; want about 180s", room.LastActivity, room.IdleSeconds)
	}
	if room.Count != 1 || room.Phase.MessageLimit != 10 || len(room.Messages) != 1 {
		t.Errorf("room %+v", room.Room)
	}
}

// The snapshot's costs are the ledger's per task and per agent, each with
// its cap; what has no price is unknown, never $0 (issue 25).
func TestSnapshotCosts(t *testing.T) {
	r := newRig(t, nil)
	r.s.Config().Budgets.Task.MaxUSD = 2
	r.s.Config().Budgets.Agent.MaxUSD = 1
	for _, e := range []cost.Entry{
		{Agent: "coder-1", Task: "tk-000001", Runtime: "llm", Model: "gpt-4o", Turns: 1, Usage: &cost.Usage{Input: 100_000, Output: 10_000}},
		{Agent: "runner-1", Task: "tk-000001", Runtime: "exec", Turns: 1},
		{Agent: "runner-2", Task: "tk-000002", Runtime: "exec", Turns: 1},
	} {
		if _, err := r.recordCost(e); err != nil {
			t.Fatal(err)
		}
	}
	snap := r.snapshot()
	for _, tt := range []struct {
		line ops.CostLine
		ok   bool
		want string
		max  float64
	}{
		{line: snap.Costs.Agents["coder-1"], want: "$0.3500", max: 1},
		{line: snap.Costs.Agents["runner-1"], want: "unknown", max: 1},
		{line: snap.Costs.Tasks["tk-000001"], want: "$0.3500 + unknown (1)", max: 2},
		{line: snap.Costs.Tasks["tk-000002"], want: "unknown", max: 2},
	} {
		if tt.line.Cost != tt.want || tt.line.MaxUSD != tt.max {
			t.Errorf("cost line %+v: want %q of %v", tt.line, tt.want, tt.max)
		}
	}
	if len(snap.Windows) != 2 {
		t.Errorf("windows %+v", snap.Windows)
	}
}
