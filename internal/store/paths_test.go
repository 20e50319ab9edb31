package store_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/errs"
)

// Every id or name is checked by shape before it becomes a path, so none
// can climb out of the state directory.
func TestLookupsRefuseBadIDs(t *testing.T) {
	s, _ := newStore(t)
	tests := []struct {
		name string
		call func() error
	}{
		{"task ..", func() error { _, err := s.Task("../../etc"); return err }},
		{"phase with a bad task id", func() error { _, err := s.Phase("../tk-000000", "ph-000000"); return err }},
		{"phase with a bad phase id", func() error { _, err := s.Phase("tk-000000", "ph-../.."); return err }},
		{"phases of a bad task id", func() error { _, err := s.Phases("tk-000000/../.."); return err }},
		{"find phase", func() error { _, err := s.FindPhase("../ph-000000"); return err }},
		{"agent ..", func() error { _, err := s.Agent("../cedar"); return err }},
		{"agent with a slash", func() error { _, err := s.Agent("a/b"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); errs.CodeOf(err) != errs.Usage {
				t.Fatalf("%v; want exit 2", err)
			}
		})
	}
}
