package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden pins what pm status and pm log print for a fixed state: ids
// from a counter, one clock, a stalled task and a working one.
func TestGolden(t *testing.T) {
	local := time.Local
	time.Local = time.UTC // pm log prints local times
	defer func() { time.Local = local }()
	h := &harness{dir: t.TempDir(), env: map[string]string{"PM_NO_SUPERVISOR": "1"}, ids: &counter{}, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	step := func(args ...string) {
		t.Helper()
		if code, _, errOut := h.run(args...); code != 0 {
			t.Fatalf("pm %v: exit %d: %s", args, code, errOut)
		}
		h.now = h.now.Add(1500 * time.Millisecond)
	}
	step("init")
	step("task", "Write the docs", "--runtime", "none")
	step("phase", "Design", "--limit", "3", "--task", "tk-000102")
	h.env["PM_AGENT"] = ownerOf(t, h, "tk-000102")
	step("say", "a first draft")
	step("say", "looks good")
	delete(h.env, "PM_AGENT")
	step("task", "Fix the build", "--runtime", "none")
	failOwner(t, h, "tk-000102")
	step("task", "Ship it", "--runtime", "none", "--blocked-by", "tk-000102")

	for _, c := range []struct {
		name string
		args []string
	}{
		{"status.golden", []string{"status"}},
		{"status-task.golden", []string{"status", "tk-000102"}},
		{"log.golden", []string{"log"}},
	} {
		code, out, errOut := h.run(c.args...)
		if code != 0 {
			t.Fatalf("pm %v: exit %d: %s", c.args, code, errOut)
		}
		out = strings.ReplaceAll(out, h.dir, "$DIR")
		path := filepath.Join("testdata", c.name)
		if *update {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("pm %v differs from %s (go test -run TestGolden ./internal/cli -update rewrites it):\n%s", c.args, path, out)
		}
	}
}

func openStore(t *testing.T, h *harness) *store.Store {
	t.Helper()
	s, err := store.Open(filepath.Join(h.dir, store.DirName))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ownerOf(t *testing.T, h *harness, id string) string {
	t.Helper()
	tk, err := openStore(t, h).Task(id)
	if err != nil {
		t.Fatal(err)
	}
	return tk.Owner
}

// failOwner records the task's owner as failed, as the supervisor does when
// it gives up on a crash loop.
func failOwner(t *testing.T, h *harness, id string) {
	t.Helper()
	s := openStore(t, h)
	code := 2
	if _, err := s.UpdateAgent(ownerOf(t, h, id), func(a *store.Agent) error {
		a.Status, a.ExitCode, a.Reason = store.AgentFailed, &code, "crash loop: 5 restarts in 60s"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
