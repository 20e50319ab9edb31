package store_test

import (
	"os"
	"testing"

	"github.com/plasmodium/pm/internal/store"
)

// OnHub reads store.url whether config.json was parsed (store.Open) or
// taken undecoded as checked before (store.OpenChecked, pm's short
// commands), and however the key is spelt in JSON.
func TestOnHub(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		want         bool
	}{
		{"no config", "", false},
		{"no store", `{"limits": {"active_tasks": 3}}`, false},
		{"an empty store section", `{"store": {}}`, false},
		{"a hub", `{"store": {"url": "nats://127.0.0.1:4222", "project": "web-000001"}}`, true},
		{"a hub under an escaped key", `{"\u0073tore": {"url": "nats://127.0.0.1:4222", "project": "web-000001"}}`, true},
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
			for _, open := range []struct {
				name string
				fn   func(string) (*store.Store, error)
			}{{"Open", store.Open}, {"OpenChecked", store.OpenChecked}, {"OpenChecked, cached", store.OpenChecked}} {
				s, err := open.fn(root)
				if err != nil {
					t.Fatalf("%s: %v", open.name, err)
				}
				if got := s.OnHub(); got != tt.want {
					t.Errorf("%s: OnHub = %v, want %v", open.name, got, tt.want)
				}
				s.RecordConfigChecked() // the next OpenChecked takes the bytes undecoded
			}
		})
	}
}
