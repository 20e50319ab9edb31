package task

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/state/statetest"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// placing is a project's records with two workers whose registrations
// list nothing (what placement reads besides them is the agents), and
// that counts its reads of agent records.
type placing struct {
	state.State
	lists, gets atomic.Int64
}

func (p *placing) Workers() ([]state.Worker, error) {
	return []state.Worker{{Name: "w1", Capacity: 8}, {Name: "w2", Capacity: 8}}, nil
}
func (*placing) RegisterWorker(context.Context, state.Worker) (state.WorkerRegistration, error) {
	return nil, errors.New("placing: no registration")
}
func (*placing) WatchWorkers(ctx context.Context, _ func()) error { <-ctx.Done(); return nil }
func (p *placing) Agents() ([]*store.Agent, error) {
	p.lists.Add(1)
	return p.State.Agents()
}
func (p *placing) Agent(name string) (*store.Agent, error) {
	p.gets.Add(1)
	return p.State.Agent(name)
}

// placedRecords writes live active tasks, each with its owner placed on
// w1 or w2 and pending, and ended more agent records of tasks long done
// (what a project's history leaves): agents records in all.
func placedRecords(t testing.TB, st state.State, live, ended int) {
	t.Helper()
	for i := range live {
		statetest.OwnedTask(t, st, "live", &store.Agent{Name: fmt.Sprintf("oak_%04d", i+1), Runtime: "llm",
			Status: store.AgentPending, Worker: []string{"w1", "w2"}[i%2], CreatedAt: time.Now()})
	}
	zero := 0
	for i := range ended {
		a := &store.Agent{Name: fmt.Sprintf("elm_%04d", i+1), Runtime: "llm", Status: store.AgentExited, ExitCode: &zero,
			Worker: "w1", CreatedAt: time.Now()}
		if _, err := st.CreateAgent(a); err != nil {
			t.Fatal(err)
		}
	}
}

// hubState is a project's records on a one-node hub.
func hubState(t testing.TB, project string) state.State {
	t.Helper()
	h := hubtest.Single(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	st, err := natsstate.Open(ctx, h.Connect(0), project)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A placement reads the agents of the live tasks only (their owners),
// never the list of every agent record the project ever made: on a hub
// each record is a message to read, and they only grow.
func TestPlacementReadsOnlyTheLiveTasksAgents(t *testing.T) {
	p := &placing{State: fsstate.New(storetest.New(t))}
	placedRecords(t, p.State, 3, 20)
	live, err := p.LiveTasks()
	if err != nil {
		t.Fatal(err)
	}
	w, err := Place(p, "", live)
	if err != nil {
		t.Fatal(err)
	}
	if w != "w2" { // w1 holds two of the three owners
		t.Errorf("placed on %q, want w2 (w1 has one place less)", w)
	}
	if n := p.lists.Load(); n != 0 {
		t.Errorf("a placement listed every agent record %d times", n)
	}
	if n := p.gets.Load(); n != 3 {
		t.Errorf("a placement read %d agent records, want the 3 live tasks' owners", n)
	}
}

// BenchmarkPlace is one placement (task.Place, the worker with the most
// free places) in a project of 200 agent records: 10 live tasks' owners
// and 190 agents ended, on the files and on a one-node hub.
func BenchmarkPlace(b *testing.B) {
	for _, backend := range []string{"files", "hub"} {
		b.Run(backend, func(b *testing.B) {
			var st state.State = fsstate.New(storetest.New(b))
			if backend == "hub" {
				st = hubState(b, "place")
			}
			p := &placing{State: st}
			placedRecords(b, st, 10, 190)
			live, err := st.LiveTasks()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Place(p, "", live); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
