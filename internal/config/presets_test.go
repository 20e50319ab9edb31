package config

import (
	"github.com/plasmodium/pm/internal/lockedfile"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestResolved(t *testing.T) {
	claude, _ := Preset("claude")
	codex, _ := Preset("codex")
	tests := []struct {
		name, file string
		want       ExecRuntime
		err        string
	}{
		{"no file: the claude preset", "", claude, ""},
		{"what pm init writes: the claude preset", "INIT", claude, ""},
		{"a preset by name", `{"runtime":{"exec":{"preset":"codex"}}}`, codex, ""},
		{"a command of its own inherits no preset",
			`{"runtime":{"exec":{"command":["bash","agent.sh"]}}}`, ExecRuntime{Preset: "claude", Command: []string{"bash", "agent.sh"}, Nudges: DefaultNudges}, ""},
		{"fields set win, env merged", `{"runtime":{"exec":{"preset":"claude","nudges":1,"prompt":"arg","env":{"X":"1","BASH_MAX_TIMEOUT_MS":"5"}}}}`,
			func() ExecRuntime {
				p, _ := Preset("claude")
				p.Nudges, p.Prompt, p.Env["X"], p.Env["BASH_MAX_TIMEOUT_MS"] = 1, PromptArg, "1", "5"
				return p
			}(), ""},
		{"unknown preset", `{"runtime":{"exec":{"preset":"aider"}}}`, ExecRuntime{}, `runtime.exec.preset is "aider"`},
		{"nudges below 0", `{"runtime":{"exec":{"command":["x"],"nudges":-1}}}`, ExecRuntime{}, "runtime.exec.nudges is -1"},
		{"unknown prompt mode", `{"runtime":{"exec":{"command":["x"],"prompt":"pipe"}}}`, ExecRuntime{}, `runtime.exec.prompt is "pipe"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			switch tc.file {
			case "INIT": // what pm init writes
				if err := lockedfile.WriteJSON(path, DefaultConfig()); err != nil {
					t.Fatal(err)
				}
			case "":
			default:
				if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := LoadConfig(path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Runtime.Exec.Resolved(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("exec %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPresets(t *testing.T) {
	if got := strings.Join(PresetNames(), ","); got != "claude,codex,gemini,opencode" {
		t.Fatalf("presets %s", got)
	}
	for _, name := range PresetNames() {
		p, _ := Preset(name)
		if p.Preset != name || len(p.Command) == 0 || p.Nudges != DefaultNudges {
			t.Errorf("%s: %+v", name, p)
		}
		// Never the prompt as one argument: Linux caps it at 128 KiB.
		inArg := strings.Contains(strings.Join(p.Command, " "), "{PROMPT}")
		if p.Prompt != PromptStdin && !strings.Contains(strings.Join(p.Command, " "), "{PROMPT_FILE}") || inArg {
			t.Errorf("%s takes its prompt as an argument: %+v", name, p)
		}
	}
	// A copy: changing it leaves the preset alone.
	p, _ := Preset("claude")
	p.Command[0], p.Env["X"] = "changed", "1"
	if Presets["claude"].Command[0] != "claude" || Presets["claude"].Env["X"] != "" {
		t.Fatal("Preset returned the preset itself")
	}
	if _, ok := Preset("nosuch"); ok {
		t.Fatal("nosuch is a preset")
	}
}

func TestSetPresetKeepsTheRest(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "config.json")
	if err := os.WriteFile(path, []byte(`{"limits":{"subtask_depth":2},"runtime":{"default":"llm","exec":{"command":["x"],"nudges":1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetPreset(root, "nosuch"); err == nil || !strings.Contains(err.Error(), `no agent preset "nosuch"`) {
		t.Fatalf("SetPreset nosuch: %v", err)
	}
	if err := SetPreset(root, "codex"); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := ExecRuntime{Preset: "codex", Nudges: 1}
	if cfg.Limits.SubtaskDepth != 2 || cfg.Runtime.Default != RuntimeExec || !reflect.DeepEqual(cfg.Runtime.Exec, want) {
		t.Fatalf("config %+v", cfg)
	}
}
