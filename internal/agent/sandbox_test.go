package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// An exec agent the config asks to sandbox is refused, never started
// unconfined, where the kernel offers no sandbox.
func TestSandboxRefusal(t *testing.T) {
	for _, c := range []struct {
		mode   sandbox.Mode
		refuse bool
	}{
		{sandbox.ModeLandlockNS, false},
		{sandbox.ModeLandlock, false},
		{sandbox.ModeNone, true},
	} {
		err := sandboxRefusal(c.mode, "no Landlock")
		if (err != nil) != c.refuse {
			t.Errorf("%s: %v", c.mode, err)
		}
		if err != nil && !strings.Contains(err.Error(), "not started") {
			t.Errorf("%s: %v", c.mode, err)
		}
	}
}

// Exec agents are sandboxed unless the config says false (issue 20: they
// ran unconfined by default); llm agents' run_command unless sandbox.off.
func TestSandboxOf(t *testing.T) {
	if sandbox.Available() == sandbox.ModeNone {
		t.Skip("the kernel offers no Landlock")
	}
	on, off := true, false
	kernel := string(sandbox.Available())
	for _, c := range []struct {
		name    string
		runtime config.RuntimeName
		exec    *bool
		offLLM  bool
		want    string
	}{
		{"exec by default", config.RuntimeExec, nil, false, kernel},
		{"exec asked for", config.RuntimeExec, &on, false, kernel},
		{"exec opted out", config.RuntimeExec, &off, false, SandboxExecOff},
		{"llm by default", config.RuntimeLLM, nil, false, kernel},
		{"llm off", config.RuntimeLLM, nil, true, SandboxOff},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := storetest.New(t)
			s.Config().Runtime.Exec.Sandbox, s.Config().Sandbox.Off = c.exec, c.offLLM
			if got := SandboxOf(s, &store.Agent{Runtime: c.runtime}); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			box, err := newExecSandbox(s, s.ProjectDir(), slog.New(slog.DiscardHandler), []string{"HOME=" + t.TempDir()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer box.close()
			if (box != nil) != (c.exec == nil || *c.exec) {
				t.Fatalf("exec sandbox %v with runtime.exec.sandbox %v", box != nil, c.exec)
			}
		})
	}
}

// A preset's config paths are made when missing (a path that does not
// exist grants nothing, and the CLI could not create it in $HOME) and then
// writable; an existing file is never touched.
func TestConfigPaths(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".kept.json"), []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got := configPaths([]string{"~/.claude", "~/.claude.json", "~/.kept.json", "relative/dir"}, home, slog.New(slog.DiscardHandler))
	want := []string{filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"), filepath.Join(home, ".kept.json")}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if st, err := os.Stat(want[0]); err != nil || !st.IsDir() {
		t.Fatalf("%s: %v", want[0], err)
	}
	for f, content := range map[string]string{want[1]: "{}\n", want[2]: `{"a":1}`} {
		if data, _ := os.ReadFile(f); string(data) != content {
			t.Errorf("%s: %q, want %q", f, data, content)
		}
	}
	if got := configPaths([]string{"~/.claude"}, "", slog.New(slog.DiscardHandler)); len(got) != 0 {
		t.Fatalf("no HOME: %v", got)
	}
}
