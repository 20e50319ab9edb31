package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/proc"
	"github.com/plasmodium/pm/internal/store"
)

// Launcher starts agent processes. It is the one way pm spawns anything: every
// agent runs as `pm agent-run NAME` (the host) in its own process group.
type Launcher struct {
	Store *store.Store
	Exe   string   // path of the pm binary
	Env   []string // base environment (os.Environ in production)
	// AfterStart runs after an agent was spawned (the CLI uses it to make
	// sure a supervisor is watching).
	AfterStart func()
}

// New records a fresh agent (status pending) and returns it. Nothing runs yet.
func New(s *store.Store, a store.Agent) (*store.Agent, error) {
	for range 16 {
		a.Name = s.IDs.AgentName()
		if _, err := os.Stat(s.AgentDir(a.Name)); os.IsNotExist(err) {
			break
		}
	}
	a.Status = store.AgentPending
	a.CreatedAt = s.Now().UTC()
	if err := s.WriteAgent(&a); err != nil {
		return nil, err
	}
	s.Notify(bus.Event{Kind: bus.EvAgentCreated, Actor: "pm", Agent: a.Name, TaskID: a.TaskID, PhaseID: a.PhaseID,
		Data: map[string]any{"prompt": a.Prompt, "role": a.Role, "runtime": a.Runtime}})
	return &a, nil
}

// Start spawns the host process for a recorded agent. Agents on the none
// runtime are never started: a human or script acts for them. The check for a
// live process and the spawn happen under the agent's lock, so two starters
// racing (a command and the supervisor) cannot both spawn it.
func (l *Launcher) Start(name string) error {
	s := l.Store
	if _, err := s.Agent(name); err != nil {
		return err
	}
	started := false
	var pid int
	a, err := lockedfile.Update(s.AgentPath(name), false, func(r *store.Agent) error {
		if r.Runtime == "none" || (r.Status == store.AgentRunning && proc.Alive(r.Pid, r.PidStart)) {
			return lockedfile.ErrUnchanged // nothing to run, or already running: never a duplicate
		}
		if r.Status == store.AgentKilled || r.Status == store.AgentFailed {
			return errs.Statef("pm kill "+r.TaskID+" --restart gives the task a fresh owner", "agent %s is %s; it is not started again", r.Name, r.Status)
		}
		var err error
		pid, err = l.spawn(r)
		if err != nil {
			return err
		}
		start, _ := proc.StartTime(pid)
		now := s.Now().UTC()
		r.Pid, r.PidStart, r.Status, r.StartedAt = pid, start, store.AgentRunning, &now
		r.ExitCode, r.EndedAt, r.Reason = nil, nil, ""
		started = true
		return nil
	})
	if err != nil || !started {
		return err
	}
	s.Notify(bus.Event{Kind: bus.EvAgentStarted, Actor: "pm", Agent: name, TaskID: a.TaskID, PhaseID: a.PhaseID,
		Data: map[string]any{"pid": pid, "role": a.Role, "restarts": a.Restarts}})
	if l.AfterStart != nil {
		l.AfterStart()
	}
	return nil
}

// spawn starts `pm agent-run NAME` in its own process group, output to the
// agent's log. The host may outlive this command; it is waited on in the
// background so a long-lived starter never leaves a zombie.
func (l *Launcher) spawn(a *store.Agent) (int, error) {
	s := l.Store
	if err := os.MkdirAll(filepath.Dir(s.LogPath(a.Name)), 0o755); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(s.LogPath(a.Name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(l.Exe, "agent-run", a.Name)
	cmd.Dir = s.ProjectDir()
	cmd.Env = Env(l.Env, s, a)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, errs.Failf("check that "+l.Exe+" exists and is executable", "start agent %s: %v", a.Name, err)
	}
	pid := cmd.Process.Pid
	// Reap the host when it exits. In a short command this goroutine dies
	// with the process (the host is re-parented and reaped by init); in a
	// long-lived one (the supervisor, an owner host starting role agents) it
	// keeps exited hosts from lingering as zombies.
	go func() { _ = cmd.Wait() }()
	return pid, nil
}

// Env is the environment an agent process gets: the base, minus any inherited
// PM_* identity, plus its own.
func Env(base []string, s *store.Store, a *store.Agent) []string {
	out := make([]string, 0, len(base)+6)
	for _, kv := range base {
		if hasAnyPrefix(kv, "PM_HOME=", "PM_AGENT=", "PM_TASK=", "PM_ROLE=", "PM_PHASE=", "PM_PROMPT_FILE=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"PM_HOME="+s.Root, "PM_AGENT="+a.Name, "PM_TASK="+a.TaskID,
		"PM_ROLE="+a.Role, "PM_PHASE="+a.PhaseID, "PM_PROMPT_FILE="+s.PromptFilePath(a.Name))
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// Kill ends an agent's process group (pid verified by start time) and marks
// it killed. An agent that is not running is only marked.
func Kill(s *store.Store, actor store.Actor, name string, grace time.Duration) error {
	a, err := s.UpdateAgent(name, func(r *store.Agent) error {
		if r.Status == store.AgentRunning || r.Status == store.AgentPending {
			now := s.Now().UTC()
			r.Status, r.EndedAt, r.Reason = store.AgentKilled, &now, "killed by "+actor.Name
		}
		return nil
	})
	if err != nil {
		return err
	}
	killed, err := proc.KillGroup(a.Pid, a.PidStart, grace)
	if err != nil {
		return fmt.Errorf("kill agent %s (pid %d): %w", name, a.Pid, err)
	}
	if killed || a.Status == store.AgentKilled {
		s.Notify(bus.Event{Kind: bus.EvAgentKilled, Actor: actor.Name, Agent: name, TaskID: a.TaskID, PhaseID: a.PhaseID,
			Data: map[string]any{"pid": a.Pid}})
	}
	return nil
}

// Running reports whether the agent's recorded process is alive.
func Running(a *store.Agent) bool {
	return a.Status == store.AgentRunning && proc.Alive(a.Pid, a.PidStart)
}
