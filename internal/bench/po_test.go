package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
)

// The MCP figure opens one room as long as its run (200 calls by default),
// over the default limit of 50 messages per phase: the residents' project
// must raise it, as every other figure's project does (pmbench's mcp step
// failed with "--limit 201 is over the limit of 50 messages per phase").
func TestResidentsRoomHoldsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pm")
	}
	dir := t.TempDir()
	for _, name := range []string{"pm", "pm-full"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../../cmd/"+name).CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	bin := filepath.Join(dir, "pm")
	const n = 60
	r, err := NewResidents(context.Background(), bin, t.TempDir(), n+10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if _, err := benchPhase(r.Store, r.Launcher.State, n); err != nil {
		t.Fatalf("a room of %d messages: %v", n+1, err)
	}
}
