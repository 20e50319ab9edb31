package natsstate_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// Workers lists what the workers' stream's leader holds. Listed through a
// consumer (a bucket's ListKeys), the keys were those of the node the
// consumer sat on, and a replica one write behind its leader left out a
// worker whose registration had been acknowledged (a supervisor placing
// agents would not see it). Each round registers a worker on the first
// node and lists the workers at once on the others: it is listed.
func TestWorkersListsAWorkerJustRegistered(t *testing.T) {
	h := hubtest.Three(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var sts []*natsstate.State
	for i := range h.Len() {
		st, err := natsstate.Open(ctx, h.Connect(i), "listed")
		if err != nil {
			t.Fatal(err)
		}
		sts = append(sts, st)
	}
	// Bounded: rounds × (a registration, two lists). The old list left
	// one out about once in 300 lists.
	const rounds = 150
	for r := range rounds {
		name := fmt.Sprintf("w%d", r)
		reg, err := sts[0].RegisterWorker(ctx, state.Worker{Name: name, Capacity: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range sts[1:] {
			ws, err := st.Workers()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(ws, func(w state.Worker) bool { return w.Name == name }) {
				t.Fatalf("round %d: node %d lists %d workers without %s, just registered", r, i+1, len(ws), name)
			}
		}
		// Released: the list stays short, each round's the same cost.
		if err := reg.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
