package stateopen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// An executable without the hub's opener (the small pm) refuses a hub
// project with a Try line naming pm-full, and never opens its files.
func TestHubWithoutOpenerIsRefused(t *testing.T) {
	hubMu.Lock()
	saved := hub
	hub = nil
	hubMu.Unlock()
	t.Cleanup(func() { RegisterHub(saved) })
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.json"), []byte(`{"store": {"url": "nats://127.0.0.1:1", "project": "web-000001"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), s)
	if err == nil {
		st.Close()
		t.Fatal("a hub project opened without the hub's opener")
	}
	if !strings.Contains(err.Error(), "cannot open a hub") || !strings.Contains(errs.TryOf(err), "pm-full") {
		t.Fatalf("error %q, Try %q", err, errs.TryOf(err))
	}
}
