package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Governance is pm's own checks on agents beyond budgets (issue 26): the
// loop breaker and the calls that wait for a human's confirmation.
type Governance struct {
	Loop LoopBreaker `json:"loop"`
	// Confirm names the calls that wait for a human's decision before they
	// run (internal/ops, confirm.go). Empty: none.
	Confirm []ConfirmRule `json:"confirm,omitempty"`
	// ConfirmTimeoutSeconds is how long a confirmation waits; unanswered by
	// then, the call is denied (0: DefaultConfirmTimeout).
	ConfirmTimeoutSeconds int `json:"confirm_timeout_seconds,omitempty"`
}

// LoopBreaker are the loop breaker's thresholds; 0 turns one off.
type LoopBreaker struct {
	// Repeat: an agent's tool call (or an exec agent's pm command) made
	// this many times in a row with the same arguments, the ones before
	// all with the same result, waits for the human.
	Repeat int `json:"repeat"`
	// Phases: opening a phase after this many phases of the task closed
	// with no file changed and no subtask done waits for the human.
	Phases int `json:"phases"`
}

// ConfirmRule names one kind of call that needs a human's confirmation.
type ConfirmRule struct {
	// Tool is the tool or pm operation: run_command, write_file, http_get,
	// done, kill, or any other tool name.
	Tool string `json:"tool"`
	// Match narrows the rule, shell-glob style (* any text, ? one
	// character) over the whole of: run_command's command, write_file's
	// path, http_get's host. Empty: every call of Tool.
	Match []string `json:"match,omitempty"`
	// NewHosts (http_get): only a host not yet allowed in this task asks;
	// a yes allows that host for the rest of the task.
	NewHosts bool `json:"new_hosts,omitempty"`
}

// DefaultLoopRepeat is governance.loop.repeat unset: the fifth same call
// with the same result pauses the agent (internal/loopguard).
const DefaultLoopRepeat = 5

// DefaultConfirmTimeout is how long a confirmation waits for an answer.
const DefaultConfirmTimeout = 10 * time.Minute

// DefaultPhasesWithoutProgress is governance.loop.phases by default.
const DefaultPhasesWithoutProgress = 3

// defaultGovernance is what a project gets when config.json says nothing.
func defaultGovernance() Governance {
	return Governance{Loop: LoopBreaker{Repeat: DefaultLoopRepeat, Phases: DefaultPhasesWithoutProgress}}
}

// ConfirmTimeout is how long a confirmation waits.
func (g Governance) ConfirmTimeout() time.Duration {
	if g.ConfirmTimeoutSeconds <= 0 {
		return DefaultConfirmTimeout
	}
	return time.Duration(g.ConfirmTimeoutSeconds) * time.Second
}

// check refuses thresholds and rules that cannot be meant.
func (g Governance) check(path string) error {
	for key, v := range map[string]int{"governance.loop.repeat": g.Loop.Repeat, "governance.loop.phases": g.Loop.Phases,
		"governance.confirm_timeout_seconds": g.ConfirmTimeoutSeconds} {
		if v < 0 {
			return fmt.Errorf("%s: %s is %d; it must be 0 (off, or the default for a timeout) or more", path, key, v)
		}
	}
	if g.Loop.Repeat == 1 {
		return fmt.Errorf("%s: governance.loop.repeat is 1, which would hold every call; use 2 or more, or 0 for off", path)
	}
	for i, r := range g.Confirm {
		if strings.TrimSpace(r.Tool) == "" {
			return fmt.Errorf("%s: governance.confirm[%d] names no tool; want {\"tool\": \"run_command\", \"match\": [\"git push*\"]}", path, i)
		}
		if r.NewHosts && r.Tool != "http_get" {
			return fmt.Errorf("%s: governance.confirm[%d]: new_hosts is for http_get, not %s", path, i, r.Tool)
		}
	}
	return nil
}

// Matches reports whether the rule holds a call of tool whose subject
// (run_command's command, write_file's path, http_get's host) is subject.
func (r ConfirmRule) Matches(tool, subject string) bool {
	if r.Tool != tool {
		return false
	}
	if len(r.Match) == 0 {
		return true
	}
	for _, m := range r.Match {
		if glob(m, strings.TrimSpace(subject)) {
			return true
		}
	}
	return false
}

// glob matches s against pattern whole: * is any text (slashes and spaces
// included), ? one character, anything else itself.
func glob(pattern, s string) bool {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(s)
}
