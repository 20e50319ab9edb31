package dashboard

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// The view answers what ops.Agents answers, step after step, while it reads
// only the live agents and those the bus named: each step changes records
// the way pm does (the record, then an event naming the agent).
func TestAgentViewMatchesOpsAgents(t *testing.T) {
	s := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(name string, st store.AgentStatus, event bool) {
		t.Helper()
		a, err := s.Agent(name)
		if err != nil {
			a = &store.Agent{Name: name, Prompt: "p", Runtime: config.RuntimeNone, CreatedAt: t0.Add(time.Duration(len(name)) * time.Second)}
		}
		a.Status = st
		if err := s.WriteAgent(a); err != nil {
			t.Fatal(err)
		}
		if event {
			s.Notify(bus.Event{Kind: bus.EvAgentExited, Actor: name, Agent: name})
		}
	}
	for i := range 5 {
		write(fmt.Sprintf("done_%d", i), store.AgentExited, false)
	}
	write("waiting", store.AgentPending, false)
	_, end, err := s.Bus().Tail(0)
	if err != nil {
		t.Fatal(err)
	}
	v := newAgentView(ctx, s.Bus(), end)
	sess := &ops.Session{Store: s, State: fsstate.New(s), Actor: store.Human}
	steps := []struct {
		name string
		do   func()
	}{
		{"first read", func() {}},
		{"a pending agent exits, with its event", func() { write("waiting", store.AgentExited, true) }},
		{"a finished agent is restarted, with its event", func() { write("done_2", store.AgentPending, true) }},
		{"a new agent appears, with its event", func() { write("newcomer", store.AgentFailed, true) }},
		{"a live agent changes without an event (usage, activity)", func() { write("done_2", store.AgentKilled, false) }},
		{"pm reset", func() { s.Notify(bus.Event{Kind: bus.EvReset}) }},
	}
	for _, step := range steps {
		step.do()
		_, cur, err := s.Bus().Tail(0)
		if err != nil {
			t.Fatal(err)
		}
		for _, all := range []bool{false, true} {
			got, err := v.list(ctx, fsstate.New(s), cur, all)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ops.Agents(ctx, sess, ops.AgentsInput{All: all})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := summary(got), summary(want); g != w {
				t.Fatalf("%s (all=%v):\n got %s\nwant %s", step.name, all, g, w)
			}
		}
	}
}

func summary(r ops.AgentsResult) string {
	out := fmt.Sprintf("hidden=%d", r.Hidden)
	for _, a := range r.Agents {
		out += " " + a.Name + ":" + string(a.Status)
	}
	return out
}

// A snapshot taken at a cursor waits for the follower to get there.
func TestAgentViewWaitsForItsCursor(t *testing.T) {
	s := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, end, _ := s.Bus().Tail(0)
	v := newAgentView(ctx, s.Bus(), end)
	s.Notify(bus.Event{Kind: bus.EvAgentExited, Actor: "x", Agent: "x"})
	_, cur, _ := s.Bus().Tail(0)
	if err := v.waitFor(ctx, cur); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	reached := v.at.Reached(cur)
	v.mu.Unlock()
	if !reached {
		t.Fatal("waitFor returned before the follower reached the cursor")
	}
}
