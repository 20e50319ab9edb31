package reset

import (
	"os"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/store"
)

// A person at a terminal is told what the wipe reaches: this directory's
// files, or a hub project every machine joined to it shares.
func TestQuestion(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		want, never  string
	}{
		{"files", "", "every task, event, request and log of ", "hub"},
		{"hub", `{"store": {"url": "nats://127.0.0.1:4222", "project": "web-000001"}}`,
			"project web-000001 on the hub nats://127.0.0.1:4222, for every machine joined to it", ".plasmodium"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, _, err := store.Init(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.config != "" {
				if err := os.WriteFile(root+"/config.json", []byte(tt.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s, err := store.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			q := question(s)
			if !strings.Contains(q, tt.want) || strings.Contains(q, tt.never) {
				t.Fatalf("question %q: want %q in it, not %q", q, tt.want, tt.never)
			}
		})
	}
}
