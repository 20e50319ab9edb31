package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmodium/pm/internal/store"
)

// pm chat marks what it showed; re-reading a room already read must not
// rewrite seen.json (an atomic write with two fsyncs, most of an agent's
// pm chat when nothing is new). The mark never moves back.
func TestMarkSeenWritesOnlyWhenItMovesForward(t *testing.T) {
	s, _ := newStore(t)
	if err := s.WriteAgent(&store.Agent{Name: "oak_0001"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.AgentDir("oak_0001"), "seen.json")
	// A rewrite is a new file renamed over the old one. A hard link keeps
	// the old inode alive, so the new file cannot reuse its number.
	keep := filepath.Join(t.TempDir(), "keep")
	rewritten := func() bool {
		t.Helper()
		a, errA := os.Stat(path)
		b, errB := os.Stat(keep)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		return !os.SameFile(a, b)
	}
	link := func() {
		t.Helper()
		os.Remove(keep)
		if err := os.Link(path, keep); err != nil {
			t.Fatal(err)
		}
	}
	s.MarkSeen("oak_0001", "ph-aaaaaa", 3)
	for _, tt := range []struct {
		n       int
		rewrite bool
		want    int
	}{
		{3, false, 3}, // the same mark: nothing to write
		{2, false, 3}, // behind: never moves back
		{0, false, 3},
		{5, true, 5}, // forward: written
		{5, false, 5},
	} {
		link()
		s.MarkSeen("oak_0001", "ph-aaaaaa", tt.n)
		if rewrote := rewritten(); rewrote != tt.rewrite {
			t.Errorf("MarkSeen(%d) after %d: rewrote %v, want %v", tt.n, tt.want, rewrote, tt.rewrite)
		}
		if got := s.Seen("oak_0001", "ph-aaaaaa"); got != tt.want {
			t.Errorf("Seen after MarkSeen(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}
