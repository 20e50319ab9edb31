package config

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// DefaultPreset is the exec runtime pm init writes without --agent.
const DefaultPreset = "claude"

// longCommandMs is how long an agent CLI's shell tool must let one command
// run: pm chat --follow and pm wait-children block until the room closes or
// the children finish, which can take as long as the agent's wall budget.
var longCommandMs = strconv.Itoa(4 * 3600 * 1000)

// Presets are the exec runtimes of the agent CLIs people use (docs/agents.md
// says what each needs). The prompt goes on stdin, or as a short argument
// naming {PROMPT_FILE}, never as one argument: Linux caps one argument at
// 128 KiB and a subtask's context alone may be bigger.
var Presets = map[string]ExecRuntime{
	// Claude Code: -p runs one turn and exits 0 when the model stops calling
	// tools; a fixed session id lets the host resume that very conversation
	// (--continue would pick the project's latest, maybe a role's);
	// stream-json reports its turns, tool calls and tokens.
	"claude": {
		Preset:  "claude",
		Command: []string{"claude", "-p", "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose", "--session-id", "{SESSION_ID}"},
		Prompt:  PromptStdin,
		Resume:  []string{"claude", "-p", "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose", "--resume", "{SESSION_ID}"},
		Output:  OutputClaudeStream,
		Nudges:  DefaultNudges,
		// Claude Code's own credentials (docs/security.md: pass_env).
		PassEnv: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		// Its settings, sessions and login; its state file beside them.
		ConfigPaths: []string{"~/.claude", "~/.claude.json"},
		Env: map[string]string{
			// The Bash tool cuts a command at 2 minutes by default.
			"BASH_DEFAULT_TIMEOUT_MS": longCommandMs,
			"BASH_MAX_TIMEOUT_MS":     longCommandMs,
		},
	},
	// OpenAI Codex CLI: exec reads the prompt from stdin given "-". Its
	// resume --last would pick the project's latest session, so an owner is
	// restarted with its whole prompt and the nudge instead.
	"codex": {
		Preset:      "codex",
		Command:     []string{"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-"},
		Prompt:      PromptStdin,
		Nudges:      DefaultNudges,
		PassEnv:     []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		ConfigPaths: []string{"~/.codex"}, // CODEX_HOME's default
	},
	// Gemini CLI: a prompt on stdin runs non-interactively; --yolo approves
	// its tools.
	"gemini": {
		Preset:      "gemini",
		Command:     []string{"gemini", "--yolo"},
		Prompt:      PromptStdin,
		Nudges:      DefaultNudges,
		PassEnv:     []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		ConfigPaths: []string{"~/.gemini"},
	},
	// opencode: run takes its message as arguments and appends a standard
	// input that is not a terminal to it, so the prompt goes on stdin after
	// a short argument. Naming only the prompt file started it without its
	// prompt where the file cannot be read (runtime.exec.sandbox hides the
	// state directory).
	"opencode": {
		Preset:  "opencode",
		Command: []string{"opencode", "run", "Your whole brief follows."},
		Prompt:  PromptStdin,
		Nudges:  DefaultNudges,
		// Its XDG directories (the defaults): login, config, cache, state.
		ConfigPaths: []string{"~/.local/share/opencode", "~/.config/opencode", "~/.cache/opencode", "~/.local/state/opencode"},
	},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns a copy of the named preset, which the caller may change.
func Preset(name string) (ExecRuntime, bool) {
	p, ok := Presets[name]
	if !ok {
		return p, false
	}
	p.Command = append([]string(nil), p.Command...)
	p.Resume = append([]string(nil), p.Resume...)
	p.PassEnv = append([]string(nil), p.PassEnv...)
	p.ConfigPaths = append([]string(nil), p.ConfigPaths...)
	if p.Env != nil {
		env := make(map[string]string, len(p.Env))
		for k, v := range p.Env {
			env[k] = v
		}
		p.Env = env
	}
	return p, true
}

// Resolved is the exec runtime to run: the preset named by Preset, with the
// fields this section sets winning (Env merged key by key), when Command is
// empty; a Command of its own stands alone, inheriting no preset's prompt
// mode, resume or environment.
func (e ExecRuntime) Resolved() ExecRuntime {
	p, ok := Preset(e.Preset)
	if len(e.Command) > 0 || !ok {
		return e
	}
	if len(e.RoleCommand) > 0 {
		p.RoleCommand = e.RoleCommand
	}
	if e.Prompt != "" {
		p.Prompt = e.Prompt
	}
	if e.Output != "" {
		p.Output = e.Output
	}
	if len(e.Resume) > 0 {
		p.Resume = e.Resume
	}
	if len(e.PassEnv) > 0 {
		p.PassEnv = e.PassEnv
	}
	if len(e.ConfigPaths) > 0 {
		p.ConfigPaths = e.ConfigPaths
	}
	p.Sandbox = e.Sandbox
	for k, v := range e.Env {
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		p.Env[k] = v
	}
	p.Nudges = e.Nudges
	return p
}

// SetPreset makes the named preset runtime.exec of the config at root (and
// exec the default runtime), keeping the nudges: pm init --agent.
func SetPreset(root, name string) error {
	if _, ok := Presets[name]; !ok {
		return errs.Usagef("pick one of "+strings.Join(PresetNames(), ", ")+", or set runtime.exec.command yourself",
			"no agent preset %q", name)
	}
	path := filepath.Join(root, "config.json")
	return lockedfile.With(path, func() error {
		cfg, err := LoadConfig(path)
		if err != nil {
			return err
		}
		cfg.Runtime.Default = RuntimeExec
		cfg.Runtime.Exec = ExecRuntime{Preset: name, Nudges: cfg.Runtime.Exec.Nudges}
		return lockedfile.WriteJSON(path, cfg)
	})
}
