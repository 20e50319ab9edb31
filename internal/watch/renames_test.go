package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Renames names what is renamed away from the directory (a record's temp
// landing elsewhere), and nothing else: not a file created, written or
// removed there, not a rename in another directory.
func TestRenames(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	names, err := Renames(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(p string) {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "created"))
	os.Remove(filepath.Join(dir, "created"))
	write(filepath.Join(other, "a"))
	if err := os.Rename(filepath.Join(other, "a"), filepath.Join(other, "b")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, ".tmp-rec"))
	if err := os.Rename(filepath.Join(dir, ".tmp-rec"), filepath.Join(other, "rec")); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-names:
		if got != ".tmp-rec" {
			t.Fatalf("first name %q, want .tmp-rec", got)
		}
	case <-time.After(20 * time.Second): // hang guard only
		t.Fatal("no rename seen")
	}
	cancel()
	for range names { // closes once ctx ends
	}
}
