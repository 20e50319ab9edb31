package store

import (
	"os"
	"path/filepath"
	"testing"
)

// Reset removes the temp of a record write killed before its rename when
// its agent is gone, and keeps one of an agent that still exists: that
// agent (made while reset ran) may be writing its record through it now.
func TestResetKeepsLiveAgentsRecordTemps(t *testing.T) {
	root, _, err := Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureAgentDir("oak_1a2b"); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(s.AgentsDir(), recordTemp+"oak_1a2b.123")
	gone := filepath.Join(s.AgentsDir(), recordTemp+"elm_3c4d.456")
	for _, f := range []string{live, gone} {
		if err := os.WriteFile(f, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ResetStateHeld(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the temp of a gone agent's write stays: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the temp of a live agent's write went: %v", err)
	}
}
