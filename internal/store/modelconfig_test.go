package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// model.timeout_seconds, retries and max_tokens are read, and out of range
// they are refused with the key named.
func TestModelCallConfig(t *testing.T) {
	tests := []struct {
		file string
		err  string
	}{
		{`{"model":{"timeout_seconds":600,"retries":2,"max_tokens":1024}}`, ""},
		{`{"model":{"retries":0}}`, ""},
		{`{"model":{"timeout_seconds":-1}}`, "model.timeout_seconds is -1"},
		{`{"model":{"max_tokens":-5}}`, "model.max_tokens is -5"},
		{`{"model":{"retries":-1}}`, "model.retries is -1"},
		{`{"model":{"retries":99}}`, "model.retries is 99"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		if _, _, err := Init(dir, nil); err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(dir, DirName)
		if err := os.WriteFile(filepath.Join(root, "config.json"), []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(root)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.file, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		m := s.Config().Model
		if strings.Contains(tc.file, "600") && (m.TimeoutSeconds != 600 || *m.Retries != 2 || m.MaxTokens != 1024) {
			t.Errorf("%s read as %+v", tc.file, m)
		}
	}
}
