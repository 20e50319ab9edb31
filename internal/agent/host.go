package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// outputDrain bounds how long the host waits for an exec agent's output
// after the agent exited, when the output is piped through the mask.
const outputDrain = 2 * time.Second

// Commands returns how the pm commands an exec agent sends its host
// (internal/broker) with token are run, as that agent; halt ends the
// agent's run for reason (the loop breaker's stop), as a budget does;
// fence is the host's hold on the agent's lease, which a call's room
// append carries (state.AppendFenced: on a hub, refused by the hub once
// another host took the lease), given by the host's guard (hostLease.guard;
// nil before it). nil Commands: the host brokers none.
type Commands func(token string, halt func(reason string), fence state.AgentLease) broker.Runner

// LLMFunc runs an agent on the built-in model loop in the host process,
// returning when the agent is finished or ctx ends.
// fence is the host's hold on the agent's lease, which the agent's room
// appends carry (state.AppendFenced), as an exec agent's calls do.
type LLMFunc func(ctx context.Context, a *store.Agent, system string, fence state.AgentLease) error

// Host runs agent name in this process: `pm agent-run NAME`. It records
// itself, renders the prompt, runs the agent (the llm runtime in-process,
// the exec runtime as a child in its process group), stops a role agent when
// its phase closes, and records how it ended.
func Host(ctx context.Context, s *store.Store, st state.State, name string, env []string, logw io.Writer, runLLM LLMFunc, onGiveUp GiveUpFunc, cmds Commands) error {
	// The token an exec agent's pm commands carry to this host is masked
	// like a secret: no log, event or message shows it to another agent.
	token := broker.NewToken()
	s.Secrets.Add(token)
	// What the host and an exec agent write to the log is masked: an agent
	// that prints a secret of its environment does not leave it there.
	masked := s.Secrets.Writer(logw)
	defer masked.Flush()
	log := slog.New(slog.NewTextHandler(masked, nil)).With("agent", name)
	// One live host per agent, on any machine: a second host leaves
	// before it runs or records anything (on the files the lease holds
	// nothing: Start's locked check keeps one host there).
	hl, err := holdLease(ctx, st, name, log)
	if errors.Is(err, state.ErrLeaseHeld) {
		log.Info("another host holds the agent's lease; leaving", "err", err)
		return errs.Statef("pm agents shows where it runs", "agent %s runs on another host: %v", name, err)
	}
	if err != nil {
		return fmt.Errorf("agent %s: take its lease: %w", name, err)
	}
	defer hl.release()
	cmds = hl.guard(cmds)
	self, _ := driver.Self()
	now := s.Now().UTC()
	a, err := st.UpdateAgent(name, func(r *store.Agent) error {
		if r.Status == store.AgentKilled || r.Status == store.AgentFailed {
			return errs.Statef("", "agent %s is %s", r.Name, r.Status)
		}
		if r.Pid != self.Pid {
			r.Handle, r.Status, r.StartedAt = self, store.AgentRunning, &now
		}
		r.Sandbox = SandboxOf(s, r)
		r.Containment = withPIDNS(r.Containment, PIDNamespaceOf(s, r))
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.AgentHere(name); err != nil { // a hub's agent: its files are this machine's
		return finish(s, st, log, a, -1, "agent directory: "+err.Error())
	}
	contain(log, a.Handle)
	text, err := Render(s, st, a)
	if err != nil {
		return finish(s, st, log, a, -1, "render prompt: "+err.Error())
	}
	// Resumed by the human's answer: the answer is the agent's first words.
	note := resumeNote(s, st, a, env)
	if note != "" {
		log.Info("resumed by the human's answer to its request")
	}
	if a.Runtime == config.RuntimeLLM {
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-hl.Lost():
				cancel()
			case <-lctx.Done():
			}
		}()
		err := hostLLM(WithResumeNote(lctx, note), s, st, log, a, text, runLLM, hl.le, onGiveUp)
		if hl.isLost() {
			driver.EndRun(a.Handle)
			return hl.fencedErr(name)
		}
		return err
	}
	if reason := overRestarts(s, a); reason != "" {
		return giveUp(s, st, log, a, -1, reason, onGiveUp)
	}
	// An owner that ends its turn without pm done (claude -p exits 0 when
	// the model answers without a tool call) is resumed, in its own
	// conversation, up to runtime.exec.nudges times; then it is given up on.
	budget := newExecBudget(s, st)
	if note != "" { // the human answered the request about it: one more of a cap it reached
		budget.allowMore(s, st, a)
	}
	act := &execActivity{set: func(what string) { SetActivity(s, st, a.Name, what) }}
	brk, err := startBroker(log, token, cmds, budget.halt, act)
	if err != nil {
		return finish(s, st, log, a, -1, err.Error())
	}
	defer brk.Close()
	agentEnv := execEnv(s, env, brk)
	box, err := newExecSandbox(s, WorkDir(s, st, a.TaskID), log, agentEnv, brk) // its config paths are under the agent's $HOME
	if err != nil {
		return finish(s, st, log, a, -1, err.Error())
	}
	defer box.close()
	if agentEnv, err = box.env(agentEnv); err != nil {
		return finish(s, st, log, a, -1, err.Error())
	}
	session, nudge := newSessionID(), ""
	first := text
	if note != "" {
		first = text + "\n\n" + note // a fresh conversation: the prompt, then the answer
	}
	for turn := 0; ; turn++ {
		if reason := overDollars(s, st, a, budget); reason != "" { // checked before each run
			return giveUp(s, st, log, a, -1, reason, onGiveUp)
		}
		prompt := text
		if turn == 0 {
			prompt = first
		}
		if hl.isLost() { // lost before this run: none starts
			driver.EndRun(a.Handle)
			return hl.fencedErr(name)
		}
		run, err := execCommand(s, a, prompt, session, nudge, box)
		if err != nil {
			return finish(s, st, log, a, -1, err.Error())
		}
		act.start()
		end, err := runExec(ctx, s, st, log, masked, logw, a, agentEnv, run, budget, box, hl.Lost())
		act.end()
		switch {
		case end.why == stopFenced:
			// Another host may run the agent by now: end what this run
			// left and write nothing (its end is not this host's to record).
			driver.EndRun(a.Handle)
			return hl.fencedErr(name)
		case err != nil:
			return finish(s, st, log, a, -1, err.Error())
		case end.over != "":
			return giveUp(s, st, log, a, end.code, end.over, onGiveUp)
		case end.why != "" || end.code != 0 || !endedTurnEarly(s, st, a):
			return finish(s, st, log, a, end.code, "")
		case rejectedSinceStart(st, a):
			// Its task was rejected while it finished (pm done returned,
			// then pm reject): not a turn ended early. It ends, and is
			// started again with the rejection in its prompt
			// (RejectionUnseen), never nudged nor given up on.
			log.Info("ending", "why", "its task was rejected since it started; it starts again for the rejection")
			return finish(s, st, log, a, 0, "")
		case turn >= s.Config().Runtime.Exec.Nudges:
			return giveUp(s, st, log, a, end.code, fmt.Sprintf("ended its turn %d times without pm done on task %s", turn+1, a.TaskID), onGiveUp)
		}
		nudge = nudgeText(a.TaskID)
		log.Info("resuming", "why", "ended its turn without pm done", "nudge", turn+1, "of", s.Config().Runtime.Exec.Nudges)
	}
}

// Why runExec stopped its CLI ("" when it ended by itself).
const (
	stopPhase  = "phase closed"
	stopSignal = "signal"
	stopBudget = "budget" // or the human's stop at the loop breaker (execBudget.halt)
	stopFenced = "lease lost"
)

// execEnd is how one run of the CLI ended: its exit code, why runExec
// stopped it, and for a budget, which one it went over.
type execEnd struct {
	code      int
	why, over string
}

// runExec starts the CLI once and waits for it, stopping it when its phase
// closes, the host is signalled or it goes over a budget.
func runExec(ctx context.Context, s *store.Store, st state.State, log *slog.Logger, masked io.Writer, logw io.Writer, a *store.Agent, env []string, run execRun, budget *execBudget, box *execSandbox, fenced <-chan struct{}) (execEnd, error) {
	argv, attr := box.wrap(run.argv)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = WorkDir(s, st, a.TaskID), env // the task's worktree
	cmd.Stdout, cmd.Stderr = logw, logw
	if run.stdin != nil {
		cmd.Stdin = strings.NewReader(*run.stdin)
	}
	if !s.Secrets.Empty() {
		// Through the masking writer: exec copies the output through a pipe.
		// Something the agent left running may hold that pipe; stop waiting
		// for its output shortly after the agent itself exited.
		cmd.Stdout, cmd.Stderr = masked, masked
		cmd.WaitDelay = outputDrain
	}
	stream := newUsageStream(run.output, cmd.Stdout, s, st, log, a, budget) // cliusage.go
	if stream != nil {
		cmd.Stdout = stream
	}
	// If the host is killed outright, its runtime must not outlive it.
	driver.DieWithParent(attr)
	cmd.SysProcAttr = attr
	log.Info("starting", "runtime", a.Runtime, "argv0", run.argv[0], "role", a.Role, "task", a.TaskID, "phase", a.PhaseID)
	driver.NoInherit()
	if err := cmd.Start(); err != nil {
		return execEnd{code: -1}, errors.New("start " + run.argv[0] + ": " + err.Error())
	}
	// ctx ends on SIGTERM/SIGINT (the CLI's signal context): pass it on.
	watchCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan string, 2)
	if a.Role != "" && a.PhaseID != "" {
		go watchPhaseClose(watchCtx, s, st, log, a, func() { stop <- stopPhase })
	}
	signalled := ctx.Done()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	linger := time.Duration(s.Config().Runtime.RoleGraceSeconds) * time.Second
	grace := s.Config().Runtime.StopGrace()
	end := execEnd{}
	wall, over := budget.wall, budget.over
	for {
		select {
		case err := <-waited:
			if stream != nil {
				stream.Flush()
			}
			if stream == nil || !stream.Reported() {
				budget.unreported(s, st, log, a) // unknown, not $0
			}
			end.code = exitCode(err)
			return end, nil
		case end.why = <-stop:
			log.Info("stopping", "why", end.why)
			go terminate(watchCtx, cmd.Process, linger, true, grace)
		case <-wall:
			wall, over = nil, nil
			end.why, end.over = stopBudget, budget.wallReason()
			log.Info("stopping", "why", end.over)
			go terminate(watchCtx, cmd.Process, 0, true, grace)
		case reason := <-over:
			wall, over = nil, nil
			end.why, end.over = stopBudget, reason
			log.Info("stopping", "why", end.over)
			go terminate(watchCtx, cmd.Process, 0, true, grace)
		case <-fenced:
			// The lease is lost: the agent is killed at once, with no grace
			// (another host may take it as the lease ends); what it started
			// is ended by the host's EndRun when this returns.
			fenced, signalled, wall, over = nil, nil, nil, nil
			end.why = stopFenced
			log.Info("stopping", "why", end.why)
			go terminate(watchCtx, cmd.Process, 0, false, 0)
		case <-signalled:
			signalled, end.why = nil, stopSignal
			log.Info("stopping", "why", end.why)
			go terminate(watchCtx, cmd.Process, 0, false, grace)
		}
	}
}

// hostLLM runs the llm runtime in this process; a role agent's run ends when
// its phase closes.
func hostLLM(ctx context.Context, s *store.Store, st state.State, log *slog.Logger, a *store.Agent, text string, runLLM LLMFunc, fence state.AgentLease, onGiveUp GiveUpFunc) error {
	if runLLM == nil {
		return finish(s, st, log, a, -1, "this host has no llm runtime")
	}
	signalled := ctx // ends on SIGTERM/SIGINT
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if a.Role != "" && a.PhaseID != "" {
		go watchPhaseClose(ctx, s, st, log, a, cancel)
	}
	log.Info("starting", "runtime", "llm", "prompt", a.Prompt, "role", a.Role, "task", a.TaskID, "phase", a.PhaseID)
	err := runLLM(ctx, a, text, fence)
	switch {
	case signalled.Err() != nil:
		// Stopped from outside. pm kill has already marked it killed; any
		// other signal is recorded like a shell would (128+15), so the
		// supervisor sees a crash and respawns it while it is wanted.
		return finish(s, st, log, a, 128+int(syscall.SIGTERM), "")
	case err != nil && ctx.Err() == nil:
		// An owner that stops for good (it kept stopping without done, went
		// over a budget, its model kept failing) is given up on as an exec
		// owner is: its room closes and the human gets a request. A role's
		// runner has told its owner already (llmagent's tell).
		if a.Role != "" {
			onGiveUp = nil
		}
		return giveUp(s, st, log, a, 1, err.Error(), onGiveUp)
	}
	return finish(s, st, log, a, 0, "")
}

// terminate asks the child to stop (after linger when its phase closed, so it
// can say goodbye), then forces it after pm's one stop grace. When its phase
// closed the request goes to the whole process group, so whatever the agent
// started leaves with it; the host shares the group but handles SIGTERM and
// stays to record the exit. (On pm kill the driver signalled the group
// already.) This is the one place outside internal/driver that signals: the
// host's own runtime child, which shares the host's group and dies with it.
// done ends when the child has been waited for: the steps left are skipped,
// so a child that leaves at once costs no linger or grace.
func terminate(done context.Context, p *os.Process, linger time.Duration, wholeGroup bool, grace time.Duration) {
	if !after(done, linger) {
		return
	}
	if wholeGroup {
		_ = syscall.Kill(0, syscall.SIGTERM)
	}
	_ = p.Signal(syscall.SIGTERM)
	if after(done, grace) {
		_ = p.Signal(syscall.SIGKILL)
	}
}

// after waits d and reports true, or reports false as soon as done ends.
func after(done context.Context, d time.Duration) bool {
	if d <= 0 {
		return done.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done.Done():
		return false
	}
}

// contain says in the log how this run's processes are held. A run in a
// cgroup needs nothing more (an orphan stays in the group); elsewhere the
// host becomes the subreaper of its descendants' orphans, so that it can
// end them as it leaves, and a killed host's are found by driver.RunEnv.
func contain(log *slog.Logger, h driver.Handle) {
	if driver.Contained(h) {
		log.Info("containment", "run", h.Run, "how", h.Containment, "cgroup", h.Cgroup)
		return
	}
	err := driver.BecomeSubreaper()
	log.Info("containment", "run", h.Run, "how", h.Containment, "subreaper", err == nil, "cgroup", "none (processes found by "+driver.RunEnv+")")
}

// watchPhaseClose calls closed once a's phase has closed. When the wait
// cannot be set up (inotify used up) it says so loudly in the log: the
// supervisor still stops the agent once the phase is closed and its grace
// has run out (supervisor/stop.go), so enforcement holds, later.
func watchPhaseClose(ctx context.Context, s *store.Store, st state.State, log *slog.Logger, a *store.Agent, closed func()) {
	err := waitPhaseClosed(ctx, st, a.TaskID, a.PhaseID)
	switch {
	case err == nil:
		closed()
	case ctx.Err() == nil:
		log.Error("cannot wait for the phase to close; the supervisor will stop this agent after it closes", "phase", a.PhaseID, "err", err)
	}
}

// waitPhaseClosed wakes on the task's changes (its rooms among them:
// state.Scope{Task}) and reads the phase's derived status.
func waitPhaseClosed(ctx context.Context, st state.State, taskID, phaseID string) error {
	return st.Watch(ctx, state.Scope{Task: taskID}, func() (bool, error) {
		ph, err := st.Phase(taskID, phaseID)
		if err != nil {
			return false, nil
		}
		return ph.Status != store.PhaseActive, nil
	})
}

func exitCode(err error) int {
	if err == nil || errors.Is(err, exec.ErrWaitDelay) {
		return 0 // exited 0; only its output pipe was cut (outputDrain)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// skipMailbox moves name's mailbox cursor past every entry it holds now:
// an exec resident's run that ended leaves its requests unanswered (their
// callers were told it ended without replying), so they no longer wait on
// it.
func skipMailbox(st state.Mailboxes, name string) error {
	end, err := st.MailboxEnd(name)
	if err != nil {
		return err
	}
	return st.SetMailboxCursor(name, end)
}

// finish ends what is left of the run and records how the agent ended,
// unless someone (pm kill) already did. The event says what the record
// says: agent.failed for an end recorded failed, agent.exited otherwise.
func finish(s *store.Store, st state.State, log *slog.Logger, a *store.Agent, code int, reason string) error {
	// What the agent started (even in its own session) ends before the end
	// is recorded: an agent recorded ended has nothing left running.
	driver.EndRun(a.Handle)
	if a.Runtime == config.RuntimeExec && a.TaskID == "" {
		// An exec resident answers no request: those of this run are over
		// (inbox.Chains takes those past the cursor as still waiting on it).
		if err := skipMailbox(st, a.Name); err != nil {
			log.Warn("inbox cursor", "err", err)
		}
	}
	now := s.Now().UTC()
	self := os.Getpid()
	failed := false
	_, err := st.UpdateAgent(a.Name, func(r *store.Agent) error {
		if r.Pid != self || r.Status != store.AgentRunning {
			return nil
		}
		r.Status, r.EndedAt, r.ExitCode, r.Reason = store.AgentExited, &now, &code, reason
		if reason != "" {
			r.Status, failed = store.AgentFailed, true
		}
		return nil
	})
	log.Info("ended", "exit_code", code, "reason", reason)
	ev := bus.Event{Kind: bus.EvAgentExited, Actor: a.Name, Agent: a.Name, TaskID: a.TaskID, PhaseID: a.PhaseID, Text: reason,
		Data: bus.AgentExited{ExitCode: code}}
	if failed {
		ev.Kind, ev.Data = bus.EvAgentFailed, bus.AgentFailed{ExitCode: code}
	}
	s.Notify(ev)
	if err != nil {
		return err
	}
	if reason != "" {
		return errs.Failf("see "+s.LogPath(a.Name), "agent %s: %s", a.Name, reason)
	}
	return nil
}
