package store

import (
	"os"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
)

// FindPhase must find the phase whatever state its index entry is in, and
// leave a right entry behind.
func TestFindPhaseThroughIndex(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, s *Store, phaseID string)
	}{
		{"entry as written", func(*testing.T, *Store, string) {}},
		{"entry missing", func(t *testing.T, s *Store, ph string) { os.Remove(s.PhaseIndexPath(ph)) }},
		{"entry empty", func(t *testing.T, s *Store, ph string) { writeFile(t, s.PhaseIndexPath(ph), "") }},
		{"entry not a task id", func(t *testing.T, s *Store, ph string) { writeFile(t, s.PhaseIndexPath(ph), "../../etc\n") }},
		{"entry names another task", func(t *testing.T, s *Store, ph string) { writeFile(t, s.PhaseIndexPath(ph), "tk-000009\n") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newInternalStore(t)
			for _, id := range []string{"tk-000001", "tk-000002", "tk-000009"} {
				if err := s.WriteTask(&Task{ID: id, Description: id, Status: TaskActive}); err != nil {
					t.Fatal(err)
				}
			}
			ph, err := s.CreatePhase("tk-000002", func(tk *Task, _ []*Phase, id string) (*Phase, error) {
				return &Phase{ID: id, TaskID: tk.ID, Status: PhaseActive}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			c.edit(t, s, ph.ID)
			got, err := s.FindPhase(ph.ID)
			if err != nil || got.TaskID != "tk-000002" || got.ID != ph.ID {
				t.Fatalf("FindPhase = %+v, %v; want %s of tk-000002", got, err, ph.ID)
			}
			if task := s.indexedTask(ph.ID); task != "tk-000002" {
				t.Fatalf("index entry after FindPhase names %q, want tk-000002", task)
			}
		})
	}
	t.Run("unknown phase", func(t *testing.T) {
		s := newInternalStore(t)
		if _, err := s.FindPhase("ph-abcdef"); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("FindPhase(unknown) = %v, want not found", err)
		}
	})
}

// A lookup that found a phase's task just before a pm reset removed it, and
// writes the index entry after the reset removed the index, leaves no entry
// naming the gone task (pm doctor --check found one after a reset that
// raced the supervisor's lookups).
func TestIndexPhaseAfterTaskRemoved(t *testing.T) {
	s := newInternalStore(t)
	if err := s.WriteTask(&Task{ID: "tk-000001", Description: "x", Status: TaskActive}); err != nil {
		t.Fatal(err)
	}
	ph, err := s.CreatePhase("tk-000001", func(tk *Task, _ []*Phase, id string) (*Phase, error) {
		return &Phase{ID: id, TaskID: tk.ID, Status: PhaseActive}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ResetStateHeld(); err != nil {
		t.Fatal(err)
	}
	s.indexPhase("tk-000001", ph.ID) // the racing lookup's late write
	if _, err := os.Stat(s.PhaseIndexPath(ph.ID)); !os.IsNotExist(err) {
		t.Fatalf("an index entry names the removed task tk-000001 (%v)", err)
	}
	if probs, err := s.CheckPhaseIndex(); err != nil || len(probs) != 0 {
		t.Fatalf("CheckPhaseIndex after reset: %v, %v", probs, err)
	}
}
