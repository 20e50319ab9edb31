package store_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// OpenChecked takes a config.json this executable checked before without
// parsing it, decodes it to the same Config as Open, and still refuses a
// config.json that does not load, whatever config.checked says.
func TestOpenCheckedConfig(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(root, "config.json")
	checked := filepath.Join(root, "config.checked")
	good := []byte(`{"limits": {"active_tasks": 7, "messages_per_phase": 300},
 "runtime": {"default": "exec", "exec": {"preset": "claude", "nudges": 2}},
 "sandbox": {"http_allow": ["10.0.0.0/8"]}}`)
	bad := []byte(`{"limits": {"actve_tasks": 7}}`)
	for _, step := range []struct {
		name        string
		config      []byte
		wantErr     bool
		wantChecked bool // config.checked exists after the open
	}{
		{"first open parses and records the digest", good, false, true},
		{"second open takes the digest", good, false, true},
		{"a changed, bad config is refused", bad, true, true},
		{"and good again", good, false, true},
	} {
		t.Run(step.name, func(t *testing.T) {
			if err := os.WriteFile(cfgPath, step.config, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := store.OpenChecked(root)
			if err == nil {
				s.RecordConfigChecked() // as a short command that succeeded does
			}
			if step.wantErr {
				if err == nil || errs.CodeOf(err) != errs.Failure {
					t.Fatalf("OpenChecked(bad config) = %v, want the bad config error", err)
				}
				_, openErr := store.Open(root)
				if openErr == nil || openErr.Error() != err.Error() {
					t.Fatalf("OpenChecked error %q, Open error %v: want the same", err, openErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(checked); (err == nil) != step.wantChecked {
				t.Fatalf("config.checked exists: %v, want %v", err == nil, step.wantChecked)
			}
			full, err := store.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.Config(), full.Config(); !reflect.DeepEqual(got, want) {
				t.Errorf("OpenChecked config\n%+v\nOpen config\n%+v", got, want)
			}
			if s.Config().Limits.ActiveTasks != 7 {
				t.Errorf("active_tasks = %d, want 7", s.Config().Limits.ActiveTasks)
			}
		})
	}
}

// A config.checked that is not this executable's digest of these bytes
// (hand-made, torn, another binary's) only means a parse.
func TestOpenCheckedIgnoresForeignDigest(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.json"), []byte(`{"bogus": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, digest := range []string{"", "0000\n", "not a digest", "\n"} {
		if err := os.WriteFile(filepath.Join(root, "config.checked"), []byte(digest), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := store.OpenChecked(root); err == nil {
			t.Errorf("config.checked %q: a bad config.json was taken", digest)
		}
	}
}
