package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// Which config.json pm trusts with what routes a secret or runs a command.
//
// config.json is in the state directory, which agents do not reach: the
// sandbox hides it from run_command and from sandboxed exec agents, the
// file tools refuse it, and an exec agent's pm commands run in its host.
// One case breaks that: a project inside another project's work tree (a
// directory above it holds a .plasmodium/ of its own). The outer project's
// agents may write anywhere in their work tree, this project's state
// directory and config.json included, and an agent's run_command can make
// one there with pm init. Such a config.json is not trusted with the keys
// below: a config that sets one is refused, and pm says why and what to do.
// (An exec agent run without the sandbox runs as the user and can write
// every file the user can, this config and ~/.config included: only its
// sandbox keeps it out, see docs/security.md.)

// routingKeys are the keys that send a secret somewhere, run a command
// outside any sandbox, widen the sandbox, or loosen the checks pm's own
// code makes on agents, each with whether a config sets it away from the
// default in that direction. Governance (issue 26): the loop breaker off or
// later than by default; governance.confirm and confirm_timeout_seconds are
// not here because the default holds no call and an unanswered confirmation
// is denied whatever its timeout, so a config can only tighten them.
// isolation "none" lets agents write the user's checkout (a worktree keeps
// them in their own). The budgets pm enforces in code (turns, tool calls,
// tokens, wall time, restarts) off or above their defaults likewise. Dollar caps and windows are off by default, so prices
// and budgets.*.max_usd|usd_per_* can only tighten too.
var routingKeys = []struct {
	key string
	set func(Config) bool
}{
	{"model.base_url", func(c Config) bool { return c.Model.BaseURL != "" }},
	{"model.api_key_env", func(c Config) bool {
		return c.Model.APIKeyEnv != "" && c.Model.APIKeyEnv != DefaultConfig().Model.APIKeyEnv
	}},
	{"notify.command", func(c Config) bool { return len(c.Notify.Command) > 0 }},
	{"sandbox.off", func(c Config) bool { return c.Sandbox.Off }},
	{"sandbox.writable", func(c Config) bool { return len(c.Sandbox.Writable) > 0 }},
	{"sandbox.http_allow", func(c Config) bool { return len(c.Sandbox.HTTPAllow) > 0 }},
	{"runtime.exec.command", func(c Config) bool { return len(c.Runtime.Exec.Command) > 0 }},
	{"runtime.exec.role_command", func(c Config) bool { return len(c.Runtime.Exec.RoleCommand) > 0 }},
	{"runtime.exec.resume", func(c Config) bool { return len(c.Runtime.Exec.Resume) > 0 }},
	{"runtime.exec.env", func(c Config) bool { return len(c.Runtime.Exec.Env) > 0 }},
	{"runtime.exec.pass_env", func(c Config) bool { return len(c.Runtime.Exec.PassEnv) > 0 }},
	{"runtime.exec.sandbox", func(c Config) bool { return c.Runtime.Exec.Sandbox != nil && !*c.Runtime.Exec.Sandbox }},
	{"runtime.exec.config_paths", func(c Config) bool { return len(c.Runtime.Exec.ConfigPaths) > 0 }},
	{"budgets.agent", func(c Config) bool { return looserBudget(c.Budgets.Agent, DefaultConfig().Budgets.Agent) }},
	{"budgets.task", func(c Config) bool { return looserBudget(c.Budgets.Task, DefaultConfig().Budgets.Task) }},
	{"governance.loop.repeat", func(c Config) bool { return looser(c.Governance.Loop.Repeat, DefaultLoopRepeat) }},
	{"governance.loop.phases", func(c Config) bool { return looser(c.Governance.Loop.Phases, DefaultPhasesWithoutProgress) }},
	{"isolation", func(c Config) bool { return c.Isolation == IsolationNone }},
	// Which remote the task branches are pushed to.
	{"git.remote", func(c Config) bool { return c.Git.Remote != "" }},
	// Where the records go and the credentials pm shows there: a config
	// agents can write must not point pm at their own hub (store.go).
	{"store", func(c Config) bool { return c.Store != (Store{}) }},
}

// looser reports a loop breaker threshold that fires later than def, or
// never (0).
func looser(v, def int) bool { return v == 0 || v > def }

// looserBudget reports a budget with a bound pm's own code enforces (turns,
// tool calls, tokens, wall time, restarts) off (0) or above def's. Dollar
// caps are off by default, so any value only tightens.
func looserBudget(b, def Budget) bool {
	for _, p := range [][2]int{{b.MaxTurns, def.MaxTurns}, {b.MaxToolCalls, def.MaxToolCalls}, {b.MaxTokens, def.MaxTokens},
		{b.MaxWallSeconds, def.MaxWallSeconds}, {b.MaxRestarts, def.MaxRestarts}} {
		if p[1] > 0 && looser(p[0], p[1]) {
			return true
		}
	}
	return false
}

// RoutingKeys lists the keys only a trusted config.json may set.
func RoutingKeys() []string {
	keys := make([]string, len(routingKeys))
	for i, k := range routingKeys {
		keys[i] = k.key
	}
	return keys
}

// TrustError is a config.json that sets a routing key where agents can
// write it.
type TrustError struct {
	Path  string // the config.json
	Key   string // the first routing key it sets
	Outer string // the project whose work tree holds it
}

func (e *TrustError) Error() string {
	return fmt.Sprintf("%s sets %s, but the project is inside the work tree of the project at %s, whose agents can write this file: "+
		"a config agents can write may not send the key elsewhere, run commands, widen the sandbox or loosen the loop breaker", e.Path, e.Key, e.Outer)
}

// Try says what makes the config trusted again.
func (e *TrustError) Try() string {
	return fmt.Sprintf("pm config unset %s, or move this project out of the work tree of %s", e.Key, e.Outer)
}

// checkTrust refuses a routing key in a config.json agents can write.
func (c Config) checkTrust(path string) error {
	key := ""
	for _, k := range routingKeys {
		if k.set(c) {
			key = k.key
			break
		}
	}
	if key == "" {
		return nil // the common case: no directory is looked at
	}
	if outer := outerProject(filepath.Dir(filepath.Dir(path))); outer != "" {
		return &TrustError{Path: path, Key: key, Outer: outer}
	}
	return nil
}

// outerProject is the nearest directory above project (real path) that
// holds a state directory: a project whose work tree holds this one. ""
// when there is none.
func outerProject(project string) string {
	p, err := filepath.Abs(project)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, DirName)); err == nil && fi.IsDir() {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// providerKeyVar is the shape of a provider's key variable: OPENAI_API_KEY,
// ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, ...
var providerKeyVar = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_API_KEY$`)

// KeyEnvError is a model.api_key_env that names no provider key.
type KeyEnvError struct {
	Path, Name string
}

func (e *KeyEnvError) Error() string {
	return fmt.Sprintf("%s: model.api_key_env is %q, which is not a provider's key variable (a name ending in _API_KEY): "+
		"pm sends that variable's value to the model's endpoint", e.Path, e.Name)
}

// Try names the default.
func (e *KeyEnvError) Try() string {
	return "pm config set model.api_key_env OPENAI_API_KEY (or the _API_KEY variable of your provider)"
}

// checkKeyEnv refuses a model.api_key_env that could pick any variable of
// pm's environment (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY) to send.
func (c Config) checkKeyEnv(path string) error {
	if n := c.Model.APIKeyEnv; n != "" && !providerKeyVar.MatchString(n) {
		return &KeyEnvError{Path: path, Name: n}
	}
	return nil
}
