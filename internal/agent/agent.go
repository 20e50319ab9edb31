package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Launcher starts agent processes. It is the one way pm spawns anything: every
// agent runs as `pm agent-run NAME` (the host), started by the driver (in its
// own process group for the process driver).
type Launcher struct {
	Store *store.Store
	// State is the project's records (internal/state/stateopen opens them
	// with the store): the agent host, the supervisor and every operation
	// that starts agents read and write records through it.
	State state.State
	Exe   string   // path of the pm binary
	Env   []string // base environment (os.Environ in production)
	// AfterStart runs after an agent was spawned (the CLI uses it to make
	// sure a supervisor is watching).
	AfterStart func()
	// WhileWanted runs fn, a command's recording of work that needs a
	// supervisor (an agent's start, a task whose owner will run), after
	// every check that could refuse it: the CLI marks a supervisor wanted
	// and holds that mark through fn (store.WhileSupervisorWanted), so a
	// refused command changes nothing, a crash after the write leaves the
	// mark for the next command to act on, and a supervisor deciding to
	// leave sees what fn recorded. nil runs fn alone.
	WhileWanted func(fn func() error) error
	// Driver runs the hosts; nil means the process driver with the store's
	// stop grace (DefaultDriver).
	Driver driver.Driver
	// Worker is the worker this process is (pm worker --name), "" for any
	// other: it starts and stops only the hosts of agents placed here
	// (store.Agent.Worker); an agent placed on another worker is started
	// and stopped by that worker, which watches the records.
	Worker string
}

// Here reports whether a's host runs on this machine: it is placed on
// this launcher's worker (or on none, and this is no worker).
func (l *Launcher) Here(a *store.Agent) bool { return a.Worker == l.Worker }

// DefaultDriver is the process driver with pm's one stop grace from s's
// config (runtime.stop_grace_seconds).
func DefaultDriver(s *store.Store) driver.Driver {
	return driver.NewProcess(s.Config().Runtime.StopGrace())
}

// driver returns l.Driver or, when unset, a process driver for l's store.
func (l *Launcher) driver() driver.Driver {
	if l.Driver != nil {
		return l.Driver
	}
	return DefaultDriver(l.Store)
}

// New records a fresh agent (status pending) and returns it. Nothing runs
// yet. A fresh name is one no agent has (CreateAgent, which of two racing
// creators only one wins) and whose mailbox is empty: a message posted to
// a name before its agent existed never reaches the agent that gets it.
func New(s *store.Store, st state.State, a store.Agent) (*store.Agent, error) {
	a.Status = store.AgentPending
	a.CreatedAt = s.Now().UTC()
	for range 16 {
		a.Name = s.IDs.AgentName()
		if end, err := st.MailboxEnd(a.Name); err != nil || end > 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		created, err := st.CreateAgent(&a)
		if err != nil {
			return nil, err
		}
		if !created {
			continue
		}
		s.Notify(bus.Event{Kind: bus.EvAgentCreated, Actor: "pm", Agent: a.Name, TaskID: a.TaskID, PhaseID: a.PhaseID,
			Data: bus.AgentCreated{Prompt: a.Prompt, Role: a.Role, Runtime: string(a.Runtime)}})
		return &a, nil
	}
	return nil, errs.Failf("try again", "no free agent name after 16 tries")
}

// Start spawns the host process for a recorded agent. Agents on the none
// runtime are never started: a human or script acts for them. The check for a
// live process and the spawn happen under the agent's lock, so two starters
// racing (a command and the supervisor) cannot both spawn it.
func (l *Launcher) Start(name string) error {
	d := l.driver()
	_, err := l.start(name, func(r *store.Agent) error {
		if r.Runtime == config.RuntimeNone || (r.Status == store.AgentRunning && d.Alive(r.Handle)) {
			return store.ErrUnchanged // nothing to run, or already running: never a duplicate
		}
		if r.Status == store.AgentKilled || r.Status == store.AgentFailed {
			return errs.Statef("pm kill "+r.TaskID+" --restart gives the task a fresh owner", "agent %s is %s; it is not started again", r.Name, r.Status)
		}
		return nil
	})
	if errors.Is(err, errNothingStarted) {
		return nil
	}
	return err
}

// ErrAlreadyRunning is Restart's answer when a live host is recorded.
var ErrAlreadyRunning = errors.New("agent already has a live host")

// errNothingStarted: start's check left the record as it was.
var errNothingStarted = errors.New("nothing started")

// Restart starts the agent again after its host died (the supervisor's
// respawn), counting the restart. Under the agent's lock it re-reads the
// record: a live host recorded there (whatever its status: another starter
// won) is ErrAlreadyRunning, and wanted's error (the agent was ended on
// purpose meanwhile) is returned as is. Nothing is spawned in either case.
func (l *Launcher) Restart(name string, wanted func(*store.Agent) error) (*store.Agent, error) {
	d := l.driver()
	return l.start(name, func(r *store.Agent) error {
		if d.Alive(r.Handle) {
			return ErrAlreadyRunning
		}
		if err := wanted(r); err != nil {
			return err
		}
		r.Restarts++
		return nil
	})
}

// Wanted runs fn under WhileWanted (fn alone when it is nil).
func (l *Launcher) Wanted(fn func() error) error {
	if l.WhileWanted == nil {
		return fn()
	}
	return l.WhileWanted(fn)
}

// start spawns the agent under its lock once check (run there on the record)
// allows it; check's store.ErrUnchanged is errNothingStarted. The spawn and
// its record are made while a supervisor is marked wanted (Wanted): killed
// before its event and AfterStart, the start still leaves a mark the next
// command revives a supervisor for, and a supervisor leaving sees it.
func (l *Launcher) start(name string, check func(*store.Agent) error, extraEnv ...string) (*store.Agent, error) {
	st := l.State
	s := l.Store
	d := l.driver()
	started := false
	var a *store.Agent
	wanted := l.Wanted
	if r, err := st.Agent(name); err == nil && r.Runtime == config.RuntimeNone {
		wanted = func(fn func() error) error { return fn() } // never started: no supervisor for it
	}
	// UpdateAgent reads the record first: an unknown agent is exit 4.
	err := wanted(func() (err error) {
		a, err = st.UpdateAgent(name, func(r *store.Agent) error {
			if !l.Here(r) {
				// Its worker starts it: it watches the records and starts
				// the pending agents placed on it (and an owner whose task
				// was rejected since it last started: RejectionUnseen). A
				// start from here changes nothing of it, whatever its
				// status: an agent that ended stays ended.
				return store.ErrUnchanged
			}
			if err := check(r); err != nil {
				return err
			}
			r.Rejections = l.rejections(r)
			h, err := l.spawn(d, r, extraEnv...)
			if err != nil {
				return err
			}
			now := s.Now().UTC()
			r.Handle, r.Status, r.StartedAt = h, store.AgentRunning, &now
			r.ExitCode, r.EndedAt, r.Reason = nil, nil, ""
			started = true
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	crashpoint.Hit("agent.start.recorded")
	if !started {
		return a, errNothingStarted
	}
	s.Notify(bus.Event{Kind: bus.EvAgentStarted, Actor: "pm", Agent: name, TaskID: a.TaskID, PhaseID: a.PhaseID,
		Data: bus.AgentStarted{Pid: a.Pid, Role: a.Role, Restarts: a.Restarts}})
	if l.AfterStart != nil {
		l.AfterStart()
	}
	return a, nil
}

// rejections is the Rejections of a's task as a start of a finds them (an
// owner's; 0 for any other, or a task not read): the start acts on every
// rejection so far (its prompt says the last one).
func (l *Launcher) rejections(a *store.Agent) int {
	if a.Role != "" || a.TaskID == "" {
		return a.Rejections
	}
	t, err := l.State.Task(a.TaskID)
	if err != nil {
		return a.Rejections
	}
	return t.Rejections
}

// spawn starts `pm agent-run NAME` through d, output to the agent's log. The
// host may outlive this command; the driver reaps it if this process lives
// long enough to see it exit.
func (l *Launcher) spawn(d driver.Driver, a *store.Agent, extraEnv ...string) (driver.Handle, error) {
	s := l.Store
	logf, err := s.OpenLog(a.Name)
	if err != nil {
		return driver.Handle{}, err
	}
	defer logf.Close()
	h, err := d.Start(context.Background(), driver.Spec{
		Name: a.Name, Argv: []string{l.Exe, "agent-run", a.Name},
		Dir: hostDir(s, l.State, a.TaskID), Env: append(Env(l.Env, s, a), extraEnv...), Output: logf,
		MaxProcs: s.Config().Runtime.MaxProcesses, DieWithParent: l.Worker != "",
	})
	if err != nil {
		return driver.Handle{}, errs.Failf("check that "+l.Exe+" exists and is executable", "start agent %s: %v", a.Name, err)
	}
	return h, nil
}

// Env is the environment an agent process gets: the base, minus any inherited
// PM_* identity, plus its own.
func Env(base []string, s *store.Store, a *store.Agent) []string {
	out := make([]string, 0, len(base)+6)
	for _, kv := range base {
		if hasAnyPrefix(kv, "PM_HOME=", "PM_AGENT=", "PM_TASK=", "PM_ROLE=", "PM_PHASE=", "PM_PROMPT_FILE=", ResumeEnv+"=", driver.RunEnv+"=", driver.NprocEnv+"=", driver.CommandEnv+"=") {
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

// Kill marks the agent killed, then stops its host through the driver
// (SIGTERM to its group, the stop grace, SIGKILL; never a recycled pid). An
// agent that is not running is only marked. Marking first means neither the
// supervisor nor its host records the end as a crash.
func (l *Launcher) Kill(actor store.Actor, name string) error {
	st := l.State
	s := l.Store
	a, err := st.UpdateAgent(name, func(r *store.Agent) error {
		if r.Status == store.AgentRunning || r.Status == store.AgentPending {
			now := s.Now().UTC()
			r.Status, r.EndedAt, r.Reason = store.AgentKilled, &now, "killed by "+actor.Name
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !l.Here(a) { // its worker, watching the records, stops the host
		if a.Status != store.AgentKilled {
			return nil
		}
		s.Notify(bus.Event{Kind: bus.EvAgentKilled, Actor: actor.Name, Agent: name, TaskID: a.TaskID, PhaseID: a.PhaseID,
			Data: bus.AgentKilled{Pid: a.Pid}})
		return nil
	}
	killed, err := l.driver().Stop(context.Background(), a.Handle)
	if err != nil {
		return fmt.Errorf("kill agent %s (pid %d): %w", name, a.Pid, err)
	}
	if killed || a.Status == store.AgentKilled {
		s.Notify(bus.Event{Kind: bus.EvAgentKilled, Actor: actor.Name, Agent: name, TaskID: a.TaskID, PhaseID: a.PhaseID,
			Data: bus.AgentKilled{Pid: a.Pid}})
	}
	return nil
}

// StopHost stops the agent's host through l's driver without touching its
// record (for a caller holding the record's lock: pm reset). A host already
// gone is stopped too: what it left running (its cgroup, its marked
// processes) is ended at once.
func (l *Launcher) StopHost(a *store.Agent) error {
	if !l.Here(a) {
		return nil // another machine's host: its worker stops it
	}
	if _, err := l.driver().Stop(context.Background(), a.Handle); err != nil {
		return fmt.Errorf("stop agent %s (pid %d): %w", a.Name, a.Pid, err)
	}
	return nil
}

// EndLeftovers stops what the run of an agent that no longer runs left
// behind (a failed agent's, a host killed -9's), through l's driver; it
// reports whether anything was left. The record is not touched.
func (l *Launcher) EndLeftovers(a *store.Agent) (bool, error) {
	if !l.Here(a) {
		return false, nil
	}
	left, err := l.driver().Stop(context.Background(), a.Handle)
	if err != nil {
		return left, fmt.Errorf("stop what agent %s left (pid %d): %w", a.Name, a.Pid, err)
	}
	return left, nil
}

// HostAlive reports whether the agent's host still runs, whatever its record
// says (a killed agent's host may still be leaving), as l's driver sees it.
func (l *Launcher) HostAlive(a *store.Agent) bool {
	return l.driver().Alive(a.Handle)
}

// Running reports whether the agent's recorded process is alive (the
// process driver's view; views and commands use it).
func Running(a *store.Agent) bool {
	return a.Status == store.AgentRunning && processes.Alive(a.Handle)
}

// processes answers Alive for Running; the process driver's Alive needs no
// state, so one instance serves every store.
var processes = driver.NewProcess(0)
