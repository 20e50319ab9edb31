package prompt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store/storetest"
)

func writeAngle(t *testing.T, dir, name, front, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte("---\n"+front+"---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The four built-in angles carry the seed's weights; a project overrides
// one and adds another like any prompt object.
func TestLoadAngles(t *testing.T) {
	s := storetest.New(t)
	set, err := prompt.LoadAngles(s, fsstate.New(s))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"correctness": 0.4, "efficiency": 0.25, "style": 0.15, "security": 0.2}
	if len(set) != len(want) {
		t.Fatalf("angles %v", set.Names())
	}
	for n, w := range want {
		a := set[n]
		if a == nil || a.Weight != w || len(a.Criteria) == 0 || !strings.HasPrefix(a.Body, "# ") {
			t.Errorf("angle %s: %+v", n, a)
		}
	}
	writeAngle(t, filepath.Join(s.ProjectDir(), "prompts", "angles"), "style", "weight: 0.1\n", "# Style\nOur house style.\n")
	writeAngle(t, filepath.Join(s.PromptsDir(), "angles"), "performance", "weight: 0.3\ncriteria: [allocations]\n", "# Performance\nCount allocations.\n")
	set, err = prompt.LoadAngles(s, fsstate.New(s))
	if err != nil {
		t.Fatal(err)
	}
	if set["style"].Weight != 0.1 || !strings.Contains(set["style"].Body, "house style") || set["performance"] == nil {
		t.Errorf("override/addition not loaded: %v", set.Names())
	}
	writeAngle(t, filepath.Join(s.PromptsDir(), "angles"), "heavy", "weight: 2\n", "# Heavy\n")
	if _, err := prompt.LoadAngles(s, fsstate.New(s)); err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
		t.Errorf("weight 2 accepted: %v", err)
	}
}
