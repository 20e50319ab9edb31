package watch_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/watch"
)

// A watched directory that is removed and made again (pm reset does this)
// must still wake the waiter when the awaited file appears in it.
func TestUntilFollowsRecreatedDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "logs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	flag := filepath.Join(dir, "flag")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard only
	defer cancel()
	checks := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() {
		done <- watch.Until(ctx, func() []string { return []string{dir} }, func() (bool, error) {
			checks <- struct{}{}
			_, err := os.Stat(flag)
			return err == nil, nil
		})
	}()
	<-checks // watching
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	<-checks // woken by the removal
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	<-checks // woken through the parent
	if err := os.WriteFile(flag, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Until: %v", err)
	}
}
