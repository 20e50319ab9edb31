package stateopen_test

import (
	"context"
	"testing"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
)

// A project without a hub keeps its records in its state directory: what
// the opened state writes, the store's files hold, and the other way round.
func TestOpenKeepsRecordsInTheStateDirectory(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := stateopen.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	created, err := st.CreateAgent(&state.Agent{Name: "ann", Status: store.AgentPending})
	if err != nil || !created {
		t.Fatalf("CreateAgent: %v, %v", created, err)
	}
	if a, err := s.Agent("ann"); err != nil || a.Name != "ann" {
		t.Fatalf("the store reads %+v, %v", a, err)
	}
	if err := s.WriteAgent(&store.Agent{Name: "bob", Status: store.AgentPending}); err != nil {
		t.Fatal(err)
	}
	if a, err := st.Agent("bob"); err != nil || a.Name != "bob" {
		t.Fatalf("the state reads %+v, %v", a, err)
	}
	for range 2 {
		if err := st.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}
