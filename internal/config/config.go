package config

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/netguard"
)

// RuntimeName is how an agent runs: the built-in llm loop, an agent CLI
// (exec), or no process at all (none: a person or a script acts as it).
type RuntimeName string

// Runtimes.
const (
	RuntimeLLM  RuntimeName = "llm"
	RuntimeExec RuntimeName = "exec"
	RuntimeNone RuntimeName = "none"
)

// DirName is the state directory pm init creates; config.json is in it.
const DirName = ".plasmodium"

// Limits are the circuit breakers of SPEC.md, enforced by the CLI (exit 3).
type Limits struct {
	AgentsPerPhase   int `json:"agents_per_phase"`
	SubtaskDepth     int `json:"subtask_depth"`
	ActiveTasks      int `json:"active_tasks"`
	MessagesPerPhase int `json:"messages_per_phase"`
	PhasesPerTask    int `json:"phases_per_task"`
	// LogEntryBytes bounds one entry of an agent's transcript or reply
	// stream, on files and on a hub alike: a longer one is kept cut, its
	// longest strings ending with a mark that says so (state.FitEntry).
	// 0, or over MaxLogEntryBytes (up to LogEntryBytesAccepted): the most
	// one entry can be (MaxLogEntryBytes).
	LogEntryBytes int `json:"log_entry_bytes,omitempty"`
	// TranscriptBytes and ReplyBytes bound the whole of one agent's
	// transcript and reply stream, on files and on a hub alike: past it
	// the oldest whole turns are dropped, a mark saying so (state.LogBounds).
	// 0: the default (64 MiB, 16 MiB); else at least MinLogBytes.
	TranscriptBytes int64 `json:"transcript_bytes,omitempty"`
	ReplyBytes      int64 `json:"reply_bytes,omitempty"`
}

// MinLogBytes is the least limits.transcript_bytes and limits.reply_bytes
// can be: a few entries of the most one can be.
const MinLogBytes = 4 << 20

// MaxLogEntryBytes is the most limits.log_entry_bytes can be: one line of
// the files (less its newline), one message of the hub's streams
// (state.MaxEntry) with room for its headers (a message id, which makes a
// repeat of it a duplicate) under the hub's 1 MiB payload bound.
const MaxLogEntryBytes = 1<<20 - 1<<10

// LogEntryBytesAccepted is the most limits.log_entry_bytes a config may
// say: the most it could say when it was made (1 MiB less 1), so a config
// valid then loads whatever MaxLogEntryBytes is now; a value over
// MaxLogEntryBytes means MaxLogEntryBytes (state.EntryLimit clamps it).
const LogEntryBytesAccepted = 1<<20 - 1

// ExecRuntime configures the exec runtime: the agent CLI to start, a preset
// of presets.go (Preset, with Command empty: Resolved) or a command of its
// own (Command, which then stands alone). In Command, RoleCommand and Resume these
// placeholders are replaced: {PROMPT} by the prompt text, {PROMPT_FILE} by the
// path of a file holding it, {SESSION_ID} by a UUID that names this host's
// conversation (the same for an owner's resumes). With Prompt "arg" (the
// default) and neither prompt placeholder, the prompt is appended as the last
// argument; with "stdin" it is written to the CLI's standard input instead.
// The prompt is also in the file named by $PM_PROMPT_FILE.
type ExecRuntime struct {
	// Preset names the agent CLI preset run when Command is empty (pm init
	// --agent writes it); the fields below that are set override it.
	Preset  string   `json:"preset,omitempty"`
	Command []string `json:"command,omitempty"`
	// RoleCommand, when set, starts role agents instead of Command.
	RoleCommand []string `json:"role_command,omitempty"`
	// Prompt is how the prompt reaches the CLI: "arg" (or empty) or "stdin".
	// One argument is capped at 128 KiB by Linux: big prompts need stdin or
	// {PROMPT_FILE}.
	Prompt string `json:"prompt,omitempty"`
	// Resume starts an owner again, in its conversation, after it ended its
	// turn without pm done; {PROMPT} is then the nudge. Empty means Command
	// again, with the whole prompt followed by the nudge.
	Resume []string `json:"resume,omitempty"`
	// Nudges is how many times an owner that ends its turn without pm done
	// is resumed before it is marked failed and the human is asked.
	Nudges int `json:"nudges"`
	// Output is how pm reads the CLI's stdout: "" as text for the log, or
	// "claude-stream-json" (Claude Code's --output-format stream-json):
	// rendered readable into the log, and its turns, tool calls and tokens
	// counted against budgets.agent.
	Output string `json:"output,omitempty"`
	// Env is added to the CLI's environment (say, how long its shell tool
	// lets a command such as pm chat --follow run).
	Env map[string]string `json:"env,omitempty"`
	// PassEnv names the secret variables (secret.IsSecretEnv) of pm's
	// environment this CLI still gets: its own vendor's key, say. Every other
	// secret variable is removed (the agent's pm commands run in its host,
	// which keeps them). A name ending in "*" is a prefix.
	PassEnv []string `json:"pass_env,omitempty"`
	// Sandbox runs the CLI confined like run_command (internal/sandbox, with
	// the config's sandbox.network and sandbox.writable): Landlock, the state
	// directory hidden, .git and prompts/ read-only, a private TMPDIR, and
	// ConfigPaths writable. Its pm commands reach pm through its host's
	// broker. Unset means on (Sandboxed); false is the explicit opt-out.
	Sandbox *bool `json:"sandbox,omitempty"`
	// ConfigPaths are the CLI's own files and directories, writable in the
	// sandbox (its login, settings, sessions: "~/.claude"); "~/" is the
	// agent's $HOME. A preset names its CLI's; set here, they replace them.
	ConfigPaths []string `json:"config_paths,omitempty"`
}

// Sandboxed reports whether exec agents run in the sandbox: unless the
// config says runtime.exec.sandbox false.
func (e ExecRuntime) Sandboxed() bool { return e.Sandbox == nil || *e.Sandbox }

// SandboxRequired reports whether the config asks for the sandbox in so
// many words (runtime.exec.sandbox true): then an agent is not started
// where there is none. By default it is started unconfined there, and
// pm agents and pm doctor say so.
func (e ExecRuntime) SandboxRequired() bool { return e.Sandbox != nil && *e.Sandbox }

// Prompt modes of ExecRuntime.Prompt.
const (
	PromptArg   = "arg"
	PromptStdin = "stdin"
)

// OutputClaudeStream is ExecRuntime.Output for Claude Code's stream-json.
const OutputClaudeStream = "claude-stream-json"

// OutputCodexJSON is ExecRuntime.Output for `codex exec --json`'s events,
// OutputGeminiJSON for `gemini --output-format json`'s result (their
// usage: internal/agent, cliusage.go).
const (
	OutputCodexJSON  = "codex-json"
	OutputGeminiJSON = "gemini-json"
)

// DefaultNudges matches the llm runtime's owner (llmagent.MaxNudges).
const DefaultNudges = 3

// Runtime picks how agents run.
type Runtime struct {
	Default RuntimeName `json:"default"` // llm, exec or none
	Exec    ExecRuntime `json:"exec"`
	// RoleGraceSeconds is how long a role agent may keep running after its
	// phase closes before it is stopped.
	RoleGraceSeconds int `json:"role_grace_seconds"`
	// StopGraceSeconds is pm's one stop grace: how long an agent (and the
	// runtime it started) gets between SIGTERM and SIGKILL, whoever stops it
	// (pm kill, pm reset, its host when its phase closed).
	StopGraceSeconds int `json:"stop_grace_seconds"`
	// MaxProcesses bounds how many processes (threads included) one agent
	// may have at once, its host counted: pids.max of its cgroup where the
	// kernel gives pm one with the pids controller, else RLIMIT_NPROC of
	// each sandboxed command that runs in a user namespace of its own (where
	// the kernel counts that command's processes only; elsewhere
	// RLIMIT_NPROC would count every process of the user, so none is set).
	// 0 means no limit. Default DefaultMaxProcesses.
	MaxProcesses int `json:"max_processes"`
	// ResidentIdle is how long a resident prompt object waits for its next
	// message before its process ends ("5m"; "0" never idles out). The
	// next message starts it again.
	ResidentIdle string `json:"resident_idle,omitempty"`
	// IdleAfter is how long a live task's room may go without a post, an
	// agent's output or a model turn before pm status shows the task idle
	// (three times as long: stuck) instead of working ("10m"; "0": never).
	IdleAfter string `json:"idle_after,omitempty"`
}

// DefaultResidentIdle is ResidentIdle when config.json does not set it.
const DefaultResidentIdle = 5 * time.Minute

// ResidentIdleAfter is ResidentIdle as a duration; 0 means never.
func (r Runtime) ResidentIdleAfter() time.Duration {
	return durationOr(r.ResidentIdle, DefaultResidentIdle)
}

// durationOr is a config duration ("5m"; "0" never), or def when it is
// unset or bad (validate refuses a bad one at load).
func durationOr(text string, def time.Duration) time.Duration {
	if text == "" {
		return def
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 {
		return def
	}
	return d
}

// DefaultMaxProcesses is Runtime.MaxProcesses when config.json does not set
// it: room for a parallel build (go build, make -j) and an agent CLI's
// threads, far below what brings a machine down.
const DefaultMaxProcesses = 1024

// StopGrace is StopGraceSeconds as a duration.
func (r Runtime) StopGrace() time.Duration { return time.Duration(r.StopGraceSeconds) * time.Second }

// Model holds provider defaults; environment variables win over these.
type Model struct {
	Name    string `json:"name,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the key (default
	// OPENAI_API_KEY); the key itself is never stored in config.json. It
	// must name a provider's key (a name ending in _API_KEY), never another
	// variable of pm's environment (configtrust.go).
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// TimeoutSeconds bounds one attempt of a model call (0: 300). A slow
	// local model's first turn can take minutes.
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
	// Retries is how many times a failed call is tried again (nil: 4, so 5
	// attempts; 0: none).
	Retries *int `json:"retries,omitempty"`
	// MaxTokens caps one response's output, sent as max_tokens (0: the
	// provider's own cap). Not a budget: budgets.*.max_tokens is.
	MaxTokens int `json:"max_tokens,omitempty"`
}

// Budget bounds what an agent (or all agents of a task together) may spend
// on the llm runtime. Zero means no bound.
type Budget struct {
	MaxTurns       int `json:"max_turns"`
	MaxToolCalls   int `json:"max_tool_calls"`
	MaxTokens      int `json:"max_tokens"`
	MaxWallSeconds int `json:"max_wall_seconds"`
	// MaxRestarts bounds how often an exec agent is started again after a
	// crash (its record's restarts).
	MaxRestarts int `json:"max_restarts,omitempty"`
	// MaxUSD bounds the dollars spent (internal/cost: priced usage, or the
	// runtime's own figure); checked before each model call of an llm
	// agent and after each result an exec agent's CLI reports.
	MaxUSD float64 `json:"max_usd"`
}

// ProjectBudget caps the whole project's spend in dollars over a sliding
// window (the last hour, the last 24 hours) of the cost ledger.
type ProjectBudget struct {
	USDPerHour float64 `json:"usd_per_hour"`
	USDPerDay  float64 `json:"usd_per_day"`
}

// Budgets are enforced in code by the llm runtime; the exec runtime's host
// enforces wall time and restarts, and turns, tool calls, tokens and
// dollars when its CLI reports them (Claude Code's stream-json).
type Budgets struct {
	Agent   Budget        `json:"agent"`
	Task    Budget        `json:"task"`
	Project ProjectBudget `json:"project"`
}

// Requests configures who may answer agents' questions (pm answer).
type Requests struct {
	// Answerers names the agents (by agent name or prompt name) that may
	// answer a request besides the human; the agent that asked never may.
	Answerers []string `json:"answerers"`
}

// Commit configures what pm done commits.
type Commit struct {
	// Exclude lists gitignore-style patterns of untracked files that pm done
	// never commits because they look like secrets; they are named in its
	// output instead.
	Exclude []string `json:"exclude"`
}

// DefaultCommitExclude is what pm init writes as commit.exclude.
var DefaultCommitExclude = []string{".env*", "*.pem", "*.key", "id_*"}

// Config is .plasmodium/config.json.
type Config struct {
	Limits   Limits   `json:"limits"`
	Runtime  Runtime  `json:"runtime"`
	Model    Model    `json:"model"`
	Budgets  Budgets  `json:"budgets"`
	Requests Requests `json:"requests"`
	Commit   Commit   `json:"commit"`
	Sandbox  Sandbox  `json:"sandbox,omitzero"`
	Notify   Notify   `json:"notify,omitzero"`
	// CodeDesigner is code-designer mode's project settings (issue 12).
	CodeDesigner CodeDesigner `json:"code_designer,omitzero"`
	// Prices override or add to the shipped price table (internal/cost),
	// one entry per model name, in dollars per million tokens.
	Prices []cost.Price `json:"prices,omitempty"`
	// Governance is the loop breaker and the confirmations (governance.go).
	Governance Governance `json:"governance"`
	// Isolation "none" keeps every task in the project's checkout; by
	// default ("worktree") each task works in a git worktree of its own.
	Isolation string      `json:"isolation,omitempty"`
	Merge     MergeConfig `json:"merge,omitzero"` // taskmerge.go
	Git       GitConfig   `json:"git,omitzero"`   // merge.go: the git remote of a hub project
	// Store is where the records live: this directory's files, or a hub
	// (store.go, docs/distributed.md).
	Store Store `json:"store,omitzero"`
}

// CodeDesigner configures code-designer mode (internal/designmode).
type CodeDesigner struct {
	// Enabled turns the mode on (or off) for every agent of the project,
	// below the CLI flag, PM_CODE_DESIGNER and a prompt object's
	// code_designer frontmatter; unset: off unless one of them says on.
	Enabled *bool `json:"enabled,omitempty"`
	// SupervisorModel plans (pm design): reads the angles' reviews, decides
	// what the worker does next. Empty: the configured model.
	SupervisorModel string `json:"supervisor_model,omitempty"`
	// WorkerModel reviews from each angle and carries the plans out.
	WorkerModel string `json:"worker_model,omitempty"`
	// MaxPasses is the default --max-passes (0: design.DefaultMaxPasses).
	MaxPasses int `json:"max_passes,omitempty"`
}

// Notify runs a command of the user's when something needs a person:
// an agent asked the human, a task is done, stalled or failed, or a budget
// stopped an agent (internal/notify; the supervisor runs it).
type Notify struct {
	// Command is the argv to run; the event is one JSON object on its
	// stdin. Empty: no notifications.
	Command []string `json:"command,omitempty"`
	// TimeoutSeconds bounds one run (default 10); the command's process
	// group is killed after it.
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// Timeout is how long one notification may run.
func (n Notify) Timeout() time.Duration {
	if n.TimeoutSeconds <= 0 {
		return 10 * time.Second
	}
	return time.Duration(n.TimeoutSeconds) * time.Second
}

// Sandbox is how run_command's commands are confined (internal/sandbox).
// The zero value is the default: Landlock where the kernel has it, network
// allowed.
type Sandbox struct {
	// Off runs commands unconfined, as pm did before: for trusted agents only.
	Off bool `json:"off,omitempty"`
	// Network false refuses commands TCP bind and connect (Landlock ABI 4+);
	// unset or true allows them.
	Network *bool `json:"network,omitempty"`
	// Writable are more absolute directories commands may write (a build
	// cache, say); the workspace and a private TMPDIR always are.
	Writable []string `json:"writable,omitempty"`
	// HTTPAllow are internal addresses (IP, IP:port or CIDR prefix) that
	// http_get may reach; loopback, private and link-local addresses are
	// refused otherwise (internal/netguard).
	HTTPAllow []string `json:"http_allow,omitempty"`
}

// DefaultConfig is what pm init writes, and what a config.json is read over.
func DefaultConfig() Config {
	return Config{
		Limits: Limits{AgentsPerPhase: 3, SubtaskDepth: 4, ActiveTasks: 10, MessagesPerPhase: 50, PhasesPerTask: 20},
		Runtime: Runtime{
			Default:          "exec",
			Exec:             ExecRuntime{Preset: DefaultPreset, Nudges: DefaultNudges},
			RoleGraceSeconds: 5,
			StopGraceSeconds: 3,
			MaxProcesses:     DefaultMaxProcesses,
		},
		Model: Model{APIKeyEnv: "OPENAI_API_KEY"},
		Budgets: Budgets{
			Agent: Budget{MaxTurns: 200, MaxToolCalls: 400, MaxTokens: 2_000_000, MaxWallSeconds: 4 * 3600, MaxRestarts: 20},
			Task:  Budget{MaxTurns: 1000, MaxToolCalls: 2000, MaxTokens: 10_000_000},
		},
		Requests:   Requests{Answerers: []string{}},
		Commit:     Commit{Exclude: append([]string(nil), DefaultCommitExclude...)},
		Governance: defaultGovernance(),
	}
}

// LoadConfig reads config.json over the defaults, so a file that names only
// some fields keeps the defaults for the rest. A malformed file is an error
// naming the file and line; a missing file means defaults.
func LoadConfig(path string) (Config, error) {
	cfg := DefaultConfig()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	return Parse(path, data)
}

// Parse decodes data (config.json's bytes, read from path) over the defaults, refusing unknown keys, and
// validates the values.
func Parse(path string, data []byte) (Config, error) {
	cfg := DefaultConfig()
	if err := lockedfile.DecodeJSON(path, data, &cfg); err != nil {
		return cfg, err
	}
	if err := checkKeys(path, data); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate(path)
}

func (c Config) validate(path string) error {
	if err := c.validateGit(path); err != nil {
		return err
	}
	if err := c.validateStore(path); err != nil { // store.go
		return err
	}
	l := c.Limits
	for name, v := range map[string]int{
		"agents_per_phase": l.AgentsPerPhase, "subtask_depth": l.SubtaskDepth, "active_tasks": l.ActiveTasks,
		"messages_per_phase": l.MessagesPerPhase, "phases_per_task": l.PhasesPerTask,
	} {
		if v < 0 {
			return fmt.Errorf("%s: limits.%s is %d; it must be 0 or more", path, name, v)
		}
	}
	if l.LogEntryBytes < 0 || l.LogEntryBytes > LogEntryBytesAccepted {
		return fmt.Errorf("%s: limits.log_entry_bytes is %d; it must be 0 (the most, %d) to %d", path, l.LogEntryBytes, MaxLogEntryBytes, LogEntryBytesAccepted)
	}
	for name, v := range map[string]int64{"transcript_bytes": l.TranscriptBytes, "reply_bytes": l.ReplyBytes} {
		if v != 0 && v < MinLogBytes {
			return fmt.Errorf("%s: limits.%s is %d; it must be 0 (the default) or at least %d", path, name, v, MinLogBytes)
		}
	}
	m := c.Model
	for name, v := range map[string]int{"timeout_seconds": m.TimeoutSeconds, "max_tokens": m.MaxTokens} {
		if v < 0 {
			return fmt.Errorf("%s: model.%s is %d; it must be 0 (the default) or more", path, name, v)
		}
	}
	if m.Retries != nil && (*m.Retries < 0 || *m.Retries > 20) {
		return fmt.Errorf("%s: model.retries is %d; it must be 0 to 20", path, *m.Retries)
	}
	if c.Runtime.MaxProcesses < 0 {
		return fmt.Errorf("%s: runtime.max_processes is %d; it must be 0 (no limit) or more", path, c.Runtime.MaxProcesses)
	}
	if c.Runtime.StopGraceSeconds < 0 {
		return fmt.Errorf("%s: runtime.stop_grace_seconds is %d; it must be 0 or more", path, c.Runtime.StopGraceSeconds)
	}
	if c.Runtime.Exec.Nudges < 0 {
		return fmt.Errorf("%s: runtime.exec.nudges is %d; it must be 0 or more", path, c.Runtime.Exec.Nudges)
	}
	if _, ok := Presets[c.Runtime.Exec.Preset]; !ok && c.Runtime.Exec.Preset != "" && len(c.Runtime.Exec.Command) == 0 {
		return fmt.Errorf("%s: runtime.exec.preset is %q; want one of %v, or set runtime.exec.command", path, c.Runtime.Exec.Preset, PresetNames())
	}
	switch o := c.Runtime.Exec.Output; o {
	case "", OutputClaudeStream, OutputCodexJSON, OutputGeminiJSON:
	default:
		return fmt.Errorf("%s: runtime.exec.output is %q; want %s, %s, %s or nothing", path, o, OutputClaudeStream, OutputCodexJSON, OutputGeminiJSON)
	}
	switch c.Runtime.Exec.Prompt {
	case "", PromptArg, PromptStdin:
	default:
		return fmt.Errorf("%s: runtime.exec.prompt is %q; want arg or stdin", path, c.Runtime.Exec.Prompt)
	}
	if d, err := time.ParseDuration(c.Runtime.IdleAfter); c.Runtime.IdleAfter != "" && (err != nil || d < 0) {
		return fmt.Errorf("%s: runtime.idle_after is %q; want a duration such as \"10m\", or \"0\" for never", path, c.Runtime.IdleAfter)
	}
	if d, err := time.ParseDuration(c.Runtime.ResidentIdle); c.Runtime.ResidentIdle != "" && (err != nil || d < 0) {
		return fmt.Errorf("%s: runtime.resident_idle is %q; want a duration such as \"5m\", or \"0\" for never", path, c.Runtime.ResidentIdle)
	}
	if err := c.checkCosts(path); err != nil {
		return err
	}
	if err := c.Governance.check(path); err != nil { // governance.go
		return err
	}
	if _, err := netguard.Parse(c.Sandbox.HTTPAllow); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if c.CodeDesigner.MaxPasses < 0 {
		return fmt.Errorf("%s: code_designer.max_passes is %d; it must be 0 (the default, 8) or more", path, c.CodeDesigner.MaxPasses)
	}
	switch c.Runtime.Default {
	case RuntimeLLM, RuntimeExec, RuntimeNone:
	default:
		return fmt.Errorf("%s: runtime.default is %q; want llm, exec or none", path, c.Runtime.Default)
	}
	if err := c.checkTrust(path); err != nil { // configtrust.go
		return err
	}
	return c.checkKeyEnv(path)
}

// checkCosts refuses prices and dollar budgets that cannot be meant.
func (c Config) checkCosts(path string) error {
	for _, p := range c.Prices {
		if err := p.Check(); err != nil {
			return fmt.Errorf("%s: prices: %v", path, err)
		}
	}
	for key, v := range map[string]float64{
		"budgets.agent.max_usd": c.Budgets.Agent.MaxUSD, "budgets.task.max_usd": c.Budgets.Task.MaxUSD,
		"budgets.project.usd_per_hour": c.Budgets.Project.USDPerHour, "budgets.project.usd_per_day": c.Budgets.Project.USDPerDay,
	} {
		if v < 0 {
			return fmt.Errorf("%s: %s is %g; it must be 0 (no cap) or more", path, key, v)
		}
	}
	return nil
}

// Caps are b's dollar budgets.
func (b Budgets) Caps() cost.Caps {
	return cost.Caps{Agent: b.Agent.MaxUSD, Task: b.Task.MaxUSD, Hour: b.Project.USDPerHour, Day: b.Project.USDPerDay}
}
