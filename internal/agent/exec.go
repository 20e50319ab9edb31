package agent

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/secret"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// GiveUpFunc is told when the host gives up on an agent of a task (it kept
// ending its turn without pm done, went over a budget, or the human said
// stop at the loop breaker). For an owner it closes the owner's room so no
// role talks where nobody owns, and asks the human (task.GiveUpOwner); for
// an exec role agent it tells the task's owner and the human, in their
// mailboxes (task.TellStopped: an llm role's runner tells them itself).
type GiveUpFunc func(a *store.Agent, reason string) error

// maxArg is Linux's MAX_ARG_STRLEN: the longest one argument may be,
// counting its terminating NUL.
const maxArg = 32 * 4096

// execRun is one start of an exec agent's CLI.
type execRun struct {
	argv   []string
	stdin  *string // written to the CLI's standard input when set
	output string  // runtime.exec.output: how to read its stdout
}

// nudgeText is what an owner that ended its turn without pm done is resumed
// with (the llm runtime's owner gets the same words).
func nudgeText(taskID string) string {
	return fmt.Sprintf("Task %s is still active. Continue your workflow; when the work is verified, run pm done.", taskID)
}

// execCommand builds the CLI's start from runtime.exec: its first start
// (nudge empty), or an owner's resume with nudge. {PROMPT_FILE} is where
// the CLI sees the file in its sandbox box (nil: unconfined).
func execCommand(s *store.Store, a *store.Agent, text, session, nudge string, box *execSandbox) (execRun, error) {
	cfg := s.Config().Runtime.Exec
	base := cfg.Command
	if a.Role != "" && len(cfg.RoleCommand) > 0 {
		base = cfg.RoleCommand
	}
	prompt, file := text, s.PromptFilePath(a.Name)
	if nudge != "" {
		if len(cfg.Resume) > 0 {
			base, prompt = cfg.Resume, nudge
		} else {
			prompt = text + "\n\n" + nudge // a fresh conversation: the whole prompt again
		}
		if err := s.WriteNudgeFile(a.Name, prompt); err != nil {
			return execRun{}, err
		}
		file = s.NudgeFilePath(a.Name)
	}
	if len(base) == 0 {
		return execRun{}, errors.New("runtime.exec.command is empty in " + s.ConfigPath())
	}
	file, err := box.visible(file)
	if err != nil {
		return execRun{}, err
	}
	r := strings.NewReplacer("{PROMPT}", prompt, "{PROMPT_FILE}", file, "{SESSION_ID}", session)
	run := execRun{output: cfg.Output}
	placed := false
	for _, arg := range base {
		if strings.Contains(arg, "{PROMPT}") || strings.Contains(arg, "{PROMPT_FILE}") {
			placed = true
		}
		run.argv = append(run.argv, r.Replace(arg))
	}
	switch {
	case cfg.Prompt == config.PromptStdin:
		run.stdin = &prompt
	case !placed:
		run.argv = append(run.argv, prompt)
	}
	for _, arg := range run.argv {
		if len(arg) >= maxArg {
			return execRun{}, errs.Usagef(`set runtime.exec.prompt to "stdin", or pass {PROMPT_FILE}, in `+s.ConfigPath(),
				"an argument of %d bytes is over the %d-byte limit of one argument (the prompt is %d bytes)", len(arg), maxArg, len(prompt))
		}
	}
	return run, nil
}

// execEnv is the environment an exec agent's CLI gets: the host's without
// its secret variables (secret.IsSecretEnv) except those runtime.exec.pass_env
// names, plus runtime.exec.env (which wins), plus the way to its host's
// broker when there is one. The provider key pm holds is not the agent's:
// its pm commands run in the host, which has it.
func execEnv(s *store.Store, env []string, brk *broker.Server) []string {
	cfg := s.Config().Runtime.Exec
	out := make([]string, 0, len(env)+len(cfg.Env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == broker.SocketEnv || name == broker.TokenEnv || name == ResumeEnv:
		case secret.IsSecretEnv(name) && !passes(cfg.PassEnv, name):
		default:
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+cfg.Env[k])
	}
	if brk != nil {
		out = append(out, broker.SocketEnv+"="+brk.Path, broker.TokenEnv+"="+brk.Token)
	}
	return out
}

// passes reports whether pass_env names the variable: exactly, or by a
// prefix ending in "*" ("ANTHROPIC_*").
func passes(passEnv []string, name string) bool {
	for _, p := range passEnv {
		if p == name || strings.HasSuffix(p, "*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

// startBroker listens for the agent's pm commands (nil, nil when the host
// brokers none). The socket is in a directory of its own, named at random,
// under broker.RunDir: outside the state directory, and hidden from every
// sandbox (the agent's own sandbox shows it its own socket: execSandbox).
// act keeps the agent's activity around each command it runs.
func startBroker(log *slog.Logger, token string, cmds Commands, halt func(string), act *execActivity) (*broker.Server, error) {
	if cmds == nil {
		return nil, nil
	}
	b, err := broker.Listen("", token, act.wrap(cmds(token, halt, nil)))
	if err != nil {
		return nil, err
	}
	go b.Serve()
	log.Info("broker", "socket", b.Path)
	return b, nil
}

// newSessionID is a random UUID (version 4) naming this host's conversation,
// so a resume continues this agent's own and not the project's latest.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// execBudget is what a host enforces on its exec agent while the CLI runs
// (budgets.agent): wall time for each host run, and the turns, tool calls
// and tokens the CLI reports (runtime.exec.output) over the agent's life.
type execBudget struct {
	wall    <-chan time.Time // nil: no bound
	wallMax time.Duration
	over    chan string // a usage budget crossed (or the human's stop), named
	// extra is what the human allowed beyond a dollar cap, by its key
	// (allowMore); written before the CLI first starts, read after.
	extra map[string]float64
	// window is the project's recent spend from the ledger, kept for the
	// host's life: each dollar check reads what was recorded since the
	// last (state.CostWindow, as the llm loop's).
	window *state.CostWindow
}

// halt stops the CLI for reason and gives the agent up, as a crossed budget
// does (runExec); the first reason wins.
func (b *execBudget) halt(reason string) {
	select {
	case b.over <- reason:
	default:
	}
}

func newExecBudget(s *store.Store, st state.State) *execBudget {
	b := &execBudget{over: make(chan string, 1), extra: map[string]float64{}, window: state.NewCostWindow(st)}
	if d := time.Duration(s.Config().Budgets.Agent.MaxWallSeconds) * time.Second; d > 0 {
		b.wall, b.wallMax = time.After(d), d
	}
	return b
}

func (b *execBudget) wallReason() string {
	return fmt.Sprintf("over its wall-time budget of %s (budgets.agent.max_wall_seconds)", b.wallMax)
}

// spender records what the CLI reports it spent in the agent's usage and
// signals over when that crosses a budget.
func (b *execBudget) spender(s *store.Store, st state.State, a *store.Agent) func(store.Usage) {
	return func(u store.Usage) {
		r, err := st.UpdateAgent(a.Name, func(r *store.Agent) error {
			r.Usage.Turns += u.Turns
			r.Usage.ToolCalls += u.ToolCalls
			r.Usage.Tokens += u.Tokens
			return nil
		})
		if err != nil {
			return
		}
		if reason := overUsage(s.Config().Budgets.Agent, r.Usage); reason != "" {
			b.halt(reason)
		}
	}
}

// overUsage names the first usage budget u is over, or "".
func overUsage(b config.Budget, u store.Usage) string {
	for _, c := range []struct {
		name      string
		used, max int64
	}{
		{"turn", u.Turns, int64(b.MaxTurns)},
		{"tool-call", u.ToolCalls, int64(b.MaxToolCalls)},
		{"token", u.Tokens, int64(b.MaxTokens)},
	} {
		if c.max > 0 && c.used > c.max {
			return fmt.Sprintf("over its %s budget: %d of %d (budgets.agent)", c.name, c.used, c.max)
		}
	}
	return ""
}

// overRestarts names why an agent restarted too often may not start again.
func overRestarts(s *store.Store, a *store.Agent) string {
	max := s.Config().Budgets.Agent.MaxRestarts
	if max <= 0 || a.Restarts <= max {
		return ""
	}
	return fmt.Sprintf("restarted %d times, over its budget of %d (budgets.agent.max_restarts)", a.Restarts, max)
}

// endedTurnEarly reports whether an owner's CLI exited 0 while its task is
// still active and nobody ended the agent: it stopped without pm done (or
// its pm done found the merge waiting: then it did not).
func endedTurnEarly(s *store.Store, st state.State, a *store.Agent) bool {
	if a.Role != "" || a.TaskID == "" {
		return false
	}
	r, err := st.Agent(a.Name)
	if err != nil || r.Status != store.AgentRunning || r.Pid != os.Getpid() {
		return false
	}
	t, err := st.Task(a.TaskID)
	// A task whose merge waits (a conflict, local changes) did run pm done:
	// it waits for a decision, not for its owner.
	return err == nil && t.Status == store.TaskActive && t.Owner == a.Name && t.Merge == nil
}

// rejectedSinceStart: a's task was rejected (pm reject) since this run
// started: its record (this run's, endedTurnEarly checked) says how many
// rejections the start saw, read now, not as the host first read it (the
// launcher writes it as it records the spawn).
func rejectedSinceStart(st state.State, a *store.Agent) bool {
	r, err := st.Agent(a.Name)
	if err != nil {
		return false
	}
	t, err := st.Task(a.TaskID)
	return err == nil && t.Rejections > r.Rejections
}

// giveUp records the agent failed for reason and, for an agent of a task
// whose failure this host recorded (not a pm kill that came first), tells
// onGiveUp.
func giveUp(s *store.Store, st state.State, log *slog.Logger, a *store.Agent, code int, reason string, onGiveUp GiveUpFunc) error {
	err := finish(s, st, log, a, code, reason)
	if a.TaskID == "" || onGiveUp == nil {
		return err
	}
	if r, rerr := st.Agent(a.Name); rerr != nil || r.Status != store.AgentFailed || r.Reason != reason || r.Pid != os.Getpid() {
		return err
	}
	if gerr := onGiveUp(a, reason); gerr != nil {
		log.Error("give up", "err", gerr)
	}
	return err
}
