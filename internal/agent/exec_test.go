package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

func TestExecCommand(t *testing.T) {
	big := strings.Repeat("x", maxArg)
	owner := &store.Agent{Name: "oak_0001", TaskID: "tk-000001"}
	role := &store.Agent{Name: "elm_0002", TaskID: "tk-000001", Role: "designer"}
	tests := []struct {
		name      string
		exec      config.ExecRuntime
		agent     *store.Agent
		text      string
		nudge     string
		wantArgv  string // joined with |; PF stands for the prompt file, NF the nudge file
		wantStdin string // "-" for none
		wantErr   string
	}{
		{"appended as last argument", config.ExecRuntime{Command: []string{"cli", "-p"}}, owner, "P", "", "cli|-p|P", "-", ""},
		{"{PROMPT} in place", config.ExecRuntime{Command: []string{"cli", "{PROMPT}", "-v"}}, owner, "P", "", "cli|P|-v", "-", ""},
		{"{PROMPT_FILE} inside an argument", config.ExecRuntime{Command: []string{"cli", "read {PROMPT_FILE} now"}}, owner, "P", "", "cli|read PF now", "-", ""},
		{"stdin", config.ExecRuntime{Command: []string{"cli", "--session-id", "{SESSION_ID}"}, Prompt: config.PromptStdin}, owner, "P", "", "cli|--session-id|S", "P", ""},
		{"role command", config.ExecRuntime{Command: []string{"cli"}, RoleCommand: []string{"role-cli"}}, role, "P", "", "role-cli|P", "-", ""},
		{"resume gets the nudge", config.ExecRuntime{Command: []string{"cli"}, Resume: []string{"cli", "--resume", "{SESSION_ID}"}, Prompt: config.PromptStdin}, owner, "P", "N", "cli|--resume|S", "N", ""},
		{"no resume: the whole prompt and the nudge", config.ExecRuntime{Command: []string{"cli"}}, owner, "P", "N", "cli|P\n\nN", "-", ""},
		{"resume with the nudge file", config.ExecRuntime{Command: []string{"cli"}, Resume: []string{"cli", "-c", "{PROMPT_FILE}"}}, owner, "P", "N", "cli|-c|NF", "-", ""},
		{"too big for one argument", config.ExecRuntime{Command: []string{"cli"}}, owner, big, "", "", "-", "over the 131072-byte limit of one argument"},
		{"big on stdin is fine", config.ExecRuntime{Command: []string{"cli"}, Prompt: config.PromptStdin}, owner, big, "", "cli", big, ""},
		{"no command", config.ExecRuntime{}, owner, "P", "", "", "-", "runtime.exec.command is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := storetest.New(t)
			s.Config().Runtime.Exec = tc.exec
			if err := s.WriteAgent(tc.agent); err != nil {
				t.Fatal(err)
			}
			run, err := execCommand(s, tc.agent, tc.text, "S", tc.nudge, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(run.argv, "|")
			got = strings.ReplaceAll(got, s.PromptFilePath(tc.agent.Name), "PF")
			got = strings.ReplaceAll(got, s.NudgeFilePath(tc.agent.Name), "NF")
			if got != tc.wantArgv {
				t.Errorf("argv %q, want %q", got, tc.wantArgv)
			}
			stdin := "-"
			if run.stdin != nil {
				stdin = *run.stdin
			}
			if stdin != tc.wantStdin {
				t.Errorf("stdin %.40q, want %.40q", stdin, tc.wantStdin)
			}
		})
	}
}

func TestExecCommandTooBigIsUsage(t *testing.T) {
	s := storetest.New(t)
	s.Config().Runtime.Exec = config.ExecRuntime{Command: []string{"cli"}}
	a := &store.Agent{Name: "oak_0001", TaskID: "tk-000001"}
	_, err := execCommand(s, a, strings.Repeat("x", maxArg), "S", "", nil)
	var e *errs.Error
	if !errors.As(err, &e) || !strings.Contains(e.Try, `runtime.exec.prompt to "stdin"`) {
		t.Fatalf("err %#v: want a usage error saying what to set", err)
	}
}

func TestExecEnv(t *testing.T) {
	base := []string{"A=0", "PATH=/bin", "OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=sk-2", "ANTHROPIC_BASE_URL=http://x",
		"GITHUB_TOKEN=ghp", "PM_BROKER=/old", "PM_AGENT_TOKEN=old", "PM_AGENT=oak"}
	brk := &broker.Server{Path: "/tmp/b/sock", Token: "t0k"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		passEnv []string
		brk     *broker.Server
		want    string
	}{
		{"config env last", map[string]string{"B": "2", "A": "1"}, nil, nil,
			"A=0 PATH=/bin ANTHROPIC_BASE_URL=http://x PM_AGENT=oak A=1 B=2"},
		{"secrets stripped, broker added", nil, nil, brk,
			"A=0 PATH=/bin ANTHROPIC_BASE_URL=http://x PM_AGENT=oak PM_BROKER=/tmp/b/sock PM_AGENT_TOKEN=t0k"},
		{"pass_env by name", nil, []string{"GITHUB_TOKEN"}, nil,
			"A=0 PATH=/bin ANTHROPIC_BASE_URL=http://x GITHUB_TOKEN=ghp PM_AGENT=oak"},
		{"pass_env by prefix", nil, []string{"ANTHROPIC_*"}, nil,
			"A=0 PATH=/bin ANTHROPIC_API_KEY=sk-2 ANTHROPIC_BASE_URL=http://x PM_AGENT=oak"},
		{"an inherited token never passes", nil, []string{"PM_*"}, nil,
			"A=0 PATH=/bin ANTHROPIC_BASE_URL=http://x PM_AGENT=oak"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := storetest.New(t)
			s.Config().Runtime.Exec.Env, s.Config().Runtime.Exec.PassEnv = tc.env, tc.passEnv
			if got := strings.Join(execEnv(s, base, tc.brk), " "); got != tc.want {
				t.Fatalf("env %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSessionIDIsUUIDv4(t *testing.T) {
	a, b := newSessionID(), newSessionID()
	if a == b || len(a) != 36 || a[14] != '4' || !strings.ContainsRune("89ab", rune(a[19])) {
		t.Fatalf("session ids %q %q", a, b)
	}
}

func TestOverRestarts(t *testing.T) {
	tests := []struct {
		max, restarts int
		over          bool
	}{{0, 100, false}, {3, 3, false}, {3, 4, true}}
	for _, tc := range tests {
		s := storetest.New(t)
		s.Config().Budgets.Agent.MaxRestarts = tc.max
		if got := overRestarts(s, &store.Agent{Restarts: tc.restarts}) != ""; got != tc.over {
			t.Errorf("max %d restarts %d: over %v, want %v", tc.max, tc.restarts, got, tc.over)
		}
	}
}

// Every preset hands its CLI the prompt itself, on stdin or in an argument,
// never only a file name: under runtime.exec.sandbox the state directory,
// where the prompt file lives, is hidden from the CLI, and the opencode
// preset, which named only the file, started its CLI without the prompt
// (issue 21 item 8). opencode run appends a standard input that is not a
// terminal to its message, so stdin reaches it.
func TestPresetsHandThePromptItself(t *testing.T) {
	owner := &store.Agent{Name: "oak_0001", TaskID: "tk-000001"}
	for _, name := range config.PresetNames() {
		for _, nudge := range []string{"", "NUDGE-TEXT"} {
			t.Run(name+"/nudge="+nudge, func(t *testing.T) {
				s := storetest.New(t)
				p, _ := config.Preset(name)
				s.Config().Runtime.Exec = p
				if err := s.WriteAgent(owner); err != nil {
					t.Fatal(err)
				}
				run, err := execCommand(s, owner, "THE-PROMPT", "S", nudge, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := "THE-PROMPT"
				if nudge != "" {
					want = nudge
				}
				got := run.stdin != nil && strings.Contains(*run.stdin, want)
				for _, a := range run.argv {
					got = got || strings.Contains(a, want)
				}
				if !got {
					t.Fatalf("%s: the CLI gets neither stdin nor an argument holding %q: argv %q", name, want, run.argv)
				}
			})
		}
	}
}
