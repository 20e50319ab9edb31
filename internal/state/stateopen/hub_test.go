package stateopen_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	_ "github.com/plasmodium/pm/internal/state/hubopen" // the hub's opener, as pm-full links it
	"github.com/plasmodium/pm/internal/state/hubproject"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
)

// machine makes a state directory whose config names the hub project (what
// pm init --store writes) and opens its store.
func machine(t testing.TB, sc config.Store) *store.Store {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"store": sc})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two state directories whose configs name one hub project share its
// records and its bus: what one writes, the other reads, and neither
// keeps a record in its files.
func TestHubProjectSharedByTwoMachines(t *testing.T) {
	h := hubtest.Single(t)
	ctx := context.Background()
	c := h.Connect(0)
	if err := hubproject.New(ctx, c, "web-00000a", "host", "/src/web", time.Now()); err != nil {
		t.Fatal(err)
	}
	sc := config.Store{URL: h.URL(0), Project: "web-00000a"}
	a, b := machine(t, sc), machine(t, sc)
	sta, err := stateopen.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer sta.Close()
	stb, err := stateopen.Open(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer stb.Close()
	if created, err := sta.CreateAgent(&state.Agent{Name: "ann", Status: store.AgentPending}); err != nil || !created {
		t.Fatalf("CreateAgent: %v, %v", created, err)
	}
	if got, err := stb.Agent("ann"); err != nil || got.Name != "ann" {
		t.Fatalf("the other machine reads %+v, %v", got, err)
	}
	if a.AgentDirExists("ann") || b.AgentDirExists("ann") {
		t.Fatal("a hub project's agent record was written to the files")
	}
	a.Notify(bus.Event{Kind: bus.EvMessage, Text: "from a"})
	ds, _, err := b.Bus().Tail(1)
	if err != nil || len(ds) != 1 || ds[0].Event.Text != "from a" {
		t.Fatalf("the other machine's bus tails %+v, %v", ds, err)
	}
	if _, err := os.Stat(a.EventsPath()); !os.IsNotExist(err) {
		t.Fatalf("a hub project's event was written to events.jsonl (%v)", err)
	}
}

// A hub that is not there, or a project it lacks, is an error with a Try
// line, never the state directory's files.
func TestHubProjectUnreachableOrMissing(t *testing.T) {
	h := hubtest.Single(t)
	for _, tt := range []struct {
		name string
		sc   config.Store
		msg  string
	}{
		{"nobody listens", config.Store{URL: "nats://127.0.0.1:1", Project: "web-00000b"}, "connect to nats://127.0.0.1:1"},
		{"no such project", config.Store{URL: h.URL(0), Project: "web-00000c"}, "the hub has no project web-00000c"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := machine(t, tt.sc)
			st, err := stateopen.Open(context.Background(), s)
			if err == nil {
				st.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tt.msg) || errs.TryOf(err) == "" {
				t.Fatalf("error %q, Try %q", err, errs.TryOf(err))
			}
			if _, _, err := s.Bus().Tail(1); err == nil {
				t.Fatal("the store hands out a bus for a hub project whose records did not open")
			}
		})
	}
}
