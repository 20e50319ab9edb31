package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/notify"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

func TestClassify(t *testing.T) {
	s := storetest.New(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tk := range []store.Task{
		{ID: "tk-00000a", Owner: "oak", Status: store.TaskActive, Description: "live"},
		{ID: "tk-00000b", Owner: "elm", Status: store.TaskDone, Description: "shipped"},
	} {
		tk.CreatedAt = now
		if err := s.WriteTask(&tk); err != nil {
			t.Fatal(err)
		}
	}
	zero := 0
	if err := s.WriteAgent(&store.Agent{Name: "oak", TaskID: "tk-00000a", Status: store.AgentExited, ExitCode: &zero}); err != nil {
		t.Fatal(err)
	}
	exit := func(code int) bus.AgentExited { return bus.AgentExited{ExitCode: code} }
	cases := []struct {
		ev   bus.Event
		want notify.Kind // "" for none
	}{
		{bus.Event{Kind: bus.EvRequestAsked, TaskID: "tk-00000a", Data: bus.RequestAsked{Request: "rq-000001"}}, notify.AskHuman},
		{bus.Event{Kind: bus.EvTaskDone, TaskID: "tk-00000b"}, notify.TaskDone},
		{bus.Event{Kind: bus.EvAgentFailed, Agent: "oak", TaskID: "tk-00000a"}, notify.Failed},
		{bus.Event{Kind: bus.EvAgentFailed, Agent: "oak", TaskID: "tk-00000a", Data: bus.AgentFailed{ExitCode: 1}}, ""},             // a host's: its request or budget event says it
		{bus.Event{Kind: bus.EvAgentFailed, Agent: "oak", TaskID: "tk-00000a", Data: bus.AgentFailed{ExitCode: 0}}, notify.Stalled}, // given up after its nudges
		{bus.Event{Kind: bus.EvAgentBudget, Agent: "oak", TaskID: "tk-00000a"}, notify.Budget},
		{bus.Event{Kind: bus.EvAgentExited, Agent: "oak", TaskID: "tk-00000a", Data: exit(0)}, notify.Stalled},
		{bus.Event{Kind: bus.EvAgentExited, Agent: "oak", TaskID: "tk-00000a", Data: exit(3)}, ""}, // a crash: respawned or failed later
		{bus.Event{Kind: bus.EvAgentExited, Agent: "elm", TaskID: "tk-00000b", Data: exit(0)}, ""}, // its task is done
		{bus.Event{Kind: bus.EvMessage, TaskID: "tk-00000a"}, ""},
	}
	for _, c := range cases {
		got, ok := notify.Classify(s, fsstate.New(s), c.ev)
		if ok != (c.want != "") || got.Kind != c.want {
			t.Errorf("Classify(%s) = %q %v, want %q", c.ev.Kind, got.Kind, ok, c.want)
		}
	}
}

// The notifier runs the configured command once per notification, in bus
// order, with the event as JSON on stdin, and resumes after its cursor.
func TestNotifierCatchUp(t *testing.T) {
	s := storetest.New(t)
	s.EventBus = &bus.Mem{}
	if _, err := s.UpdateConfig(func(tree map[string]any) error {
		config.SetConfigKey(tree, "notify.command", []any{"notify-me"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []notify.Event
	n := &notify.Notifier{Store: s, State: fsstate.New(s), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Exec: func(ctx context.Context, argv []string, stdin []byte) error {
			var ev notify.Event
			if err := json.Unmarshal(stdin, &ev); err != nil || argv[0] != "notify-me" {
				t.Errorf("argv %v, stdin %q: %v", argv, stdin, err)
			}
			got = append(got, ev)
			return nil
		}}
	publish := func(evs ...bus.Event) {
		for _, ev := range evs {
			if err := s.Bus().Publish(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	// With no saved cursor the notifier starts at the bus's end: the past
	// is not notified.
	publish(bus.Event{Kind: bus.EvAgentFailed, Agent: "old"})
	if err := (&notify.Notifier{Store: s, State: fsstate.New(s), Log: n.Log, Exec: n.Exec}).CatchUp(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("notified the past: %+v, %v", got, err)
	}
	// pm config set notify.* saves the cursor at the end; from there on:
	_, end, _ := s.Bus().Tail(0)
	if err := s.SetNotifyCursor(end); err != nil {
		t.Fatal(err)
	}
	publish(bus.Event{Kind: bus.EvMessage}, bus.Event{Kind: bus.EvAgentFailed, Agent: "a"}, bus.Event{Kind: bus.EvAgentBudget, Agent: "b"})
	if err := n.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	publish(bus.Event{Kind: bus.EvAgentFailed, Agent: "c"})
	if err := n.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := n.CatchUp(context.Background()); err != nil { // nothing new: returns at once
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Agent != "a" || got[1].Kind != notify.Budget || got[2].Agent != "c" {
		t.Fatalf("notified %+v", got)
	}
}
