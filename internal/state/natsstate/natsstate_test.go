package natsstate_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/state/statetest"
)

func TestMain(m *testing.M) { os.Exit(hubtest.Main(m)) }

// The shared conformance suite, each test on a project of its own, on one
// node and on three (R3).
func TestConformance(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			c := h.Connect(0)
			var n atomic.Int64
			statetest.Run(t, func(t *testing.T) state.State {
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				st, err := natsstate.Open(ctx, c, fmt.Sprintf("p%d", n.Add(1)))
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}

// The records' bucket reads from its stream's leader: with direct reads
// (a key-value bucket's default) a lagging replica answered a read after
// an acknowledged update with the record before it, and the suite lost
// an update on three nodes. Opening again keeps it so.
func TestRecordsReadFromTheLeader(t *testing.T) {
	h := hubtest.Three(t)
	c := h.Connect(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 2 {
		if _, err := natsstate.Open(ctx, c, "lead"); err != nil {
			t.Fatal(err)
		}
		s, err := c.JS.Stream(ctx, natsstate.RecordsStream("lead"))
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.AllowDirect {
			t.Fatal("the records' bucket answers reads from any replica")
		}
	}
}

// Two projects on one hub share no stream: a project named like another's
// locks ("x" and "x-locks") once had its records in that lock bucket, and
// opening "x" gave them the locks' time to live: they expired.
func TestProjectsShareNoStream(t *testing.T) {
	h := hubtest.Single(t)
	c := h.Connect(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inner, err := natsstate.Open(ctx, c, "x-locks")
	if err != nil {
		t.Fatal(err)
	}
	outer, err := natsstate.Open(ctx, c, "x")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, p := range []*natsstate.State{inner, outer} {
		for _, name := range p.Streams() {
			if other, ok := seen[name]; ok {
				t.Errorf("stream %s is %s's and %s's", name, other, p.Project())
			}
			seen[name] = p.Project()
			if _, err := c.JS.Stream(ctx, name); err != nil {
				t.Errorf("%s's stream %s: %v", p.Project(), name, err)
			}
		}
	}
	s, err := c.JS.Stream(ctx, inner.Streams()[0])
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.MaxAge != 0 {
		t.Fatalf("x-locks's records expire after %s", info.Config.MaxAge)
	}
	for _, bad := range []string{"", "a_b", "A", "a.b", "-a"} {
		if _, err := natsstate.Open(ctx, c, bad); err == nil {
			t.Errorf("project %q opened", bad)
		}
	}
}

// The totals of the agents' logs (statetest.RunLogBounds), on one node
// and on three (R3: the purges replicated).
func TestLogBounds(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			c := h.Connect(0)
			var n atomic.Int64
			statetest.RunLogBounds(t, func(t *testing.T, b state.LogBounds) state.State {
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				st, err := natsstate.Open(ctx, c, fmt.Sprintf("b%d", n.Add(1)))
				if err != nil {
					t.Fatal(err)
				}
				st.Bounds = b
				return st
			})
		})
	}
}
