package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
)

// The digest is what makes a short command skip the parse: bytes whose
// digest config.checked holds are not parsed (here, bad bytes with a forged
// digest are taken, which shows the parse was skipped), and are decoded only
// when Config is called.
func TestOpenCheckedSkipsTheParse(t *testing.T) {
	root, _, err := Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"limits": {"actve_tasks": 7}}`) // refused by config.Parse
	if err := os.WriteFile(filepath.Join(root, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	digest := configDigest(data)
	if digest == "" {
		t.Skip("this test binary cannot identify itself")
	}
	if err := os.WriteFile(filepath.Join(root, "config.checked"), []byte(digest+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenChecked(root)
	if err != nil {
		t.Fatalf("OpenChecked parsed bytes config.checked vouches for: %v", err)
	}
	if s.config.cfg != nil {
		t.Fatal("config decoded before anything read it")
	}
	if got := s.Config().Limits.ActiveTasks; got != config.DefaultConfig().Limits.ActiveTasks {
		t.Errorf("active_tasks = %d, want the default (the misspelt key is not a key)", got)
	}
	if _, err := Open(root); err == nil {
		t.Error("Open took a bad config.json: it must always parse")
	}
}

// config.checked is read through a bound: a huge one (not pm's) costs a
// short command nothing, and a digest past the bound is not taken.
func TestCheckedDigestsBounded(t *testing.T) {
	root, _, err := Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &Store{Root: root}
	junk := strings.Repeat(strings.Repeat("f", 64)+"\n", 10000)
	if err := os.WriteFile(s.configCheckedPath(), []byte(junk+"beyond\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := s.checkedDigests()
	if len(got) != maxCheckedDigests {
		t.Fatalf("%d digests read from a 650 KB config.checked, want the first %d", len(got), maxCheckedDigests)
	}
	for _, d := range got {
		if d == "beyond" {
			t.Fatal("a digest past the bound was taken")
		}
	}
}
