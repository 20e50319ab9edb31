package ops

import (
	"context"
	"os"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/supervisor"
)

// Session is who runs an operation and with what: the open store, the
// project's records, the acting identity, and how to start agents.
type Session struct {
	Store *store.Store
	// State is the project's records, as internal/state/stateopen opened
	// them for the store (whoever opened the session closes them).
	State state.State
	Actor store.Actor
	// Launcher starts agents (owners, role agents, prompt objects); nil:
	// operations that would start one refuse.
	Launcher *agent.Launcher
	// Getenv reads the caller's environment for runtime checks (is a model
	// provider configured?); nil means os.Getenv.
	Getenv func(string) string
	// CodeDesigner is the --code-designer flag of the command that opened
	// the session (pm task, pm send, pm talk); nil when not given. Every
	// agent the session addresses from the command line gets the mode it
	// decides (internal/designmode's precedence).
	CodeDesigner *bool
	// Halt ends the acting agent's run from its host, as a budget does
	// (an exec agent's CLI and what it started, recorded failed with
	// reason; an owner's human asked what next): how the loop breaker's
	// "stop" stops an exec agent whose pm command it held. nil: the caller
	// stops the agent itself (the llm runtime), or there is none to stop.
	Halt func(reason string)
	// Fence is the lease of the host whose agent's call this is: its room
	// appends carry it (state.AppendFenced), so on a hub a host that lost
	// the lease has its say refused by the hub itself. nil: a person's
	// call, or an agent whose host hands none (appends as ever).
	Fence state.AgentLease
}

func (s *Session) getenv(k string) string {
	if s.Getenv == nil {
		return os.Getenv(k)
	}
	return s.Getenv(k)
}

func (s *Session) launcher() (*agent.Launcher, error) {
	if s.Launcher == nil {
		return nil, errs.Failf("", "this host cannot start agents")
	}
	return s.Launcher, nil
}

// NewLauncher is the launcher every surface starts agents with: agents of st
// (whose records are rec) run as `exe agent-run NAME` with environ, and
// unless PM_NO_SUPERVISOR is set a supervisor is started on demand after
// each start.
func NewLauncher(st *store.Store, rec state.State, exe string, environ []string, getenv func(string) string) *agent.Launcher {
	l := &agent.Launcher{Store: st, State: rec, Exe: exe, Env: environ}
	if !SupervisorOff(getenv) {
		// Marked before a task whose owner it starts is written, and
		// before each start: killed after the write and before the owner
		// starts (or before AfterStart), the command leaves the mark, so
		// the next command or waiter starts a supervisor, whose Settle
		// starts the owner.
		l.WhileWanted = st.WhileSupervisorWanted
		l.AfterStart = func() {
			if err := supervisor.Ensure(l); err != nil {
				st.Warnf("%v", err)
			}
		}
	}
	return l
}

// SupervisorOff is the one reading of PM_NO_SUPERVISOR: set, nothing pm
// runs on this machine starts a supervisor (on demand after a start, at a
// command's session start, beside a waiter, or pm doctor --fix).
func SupervisorOff(getenv func(string) string) bool { return getenv("PM_NO_SUPERVISOR") != "" }

// EnsureSupervisor starts this machine's supervisor if none runs, unless
// PM_NO_SUPERVISOR is set: it reports whether one runs now.
func EnsureSupervisor(l *agent.Launcher, getenv func(string) string) (bool, error) {
	if SupervisorOff(getenv) {
		return false, nil
	}
	return true, supervisor.Ensure(l)
}

// ReviveSupervisor starts a supervisor if one should run and none does (it
// died with agents to keep alive), unless PM_NO_SUPERVISOR is set. Every
// command's session start calls it: a stat when nothing is wanted.
func ReviveSupervisor(l *agent.Launcher, getenv func(string) string) {
	if SupervisorOff(getenv) {
		return
	}
	if err := supervisor.Revive(l); err != nil {
		l.Store.Warnf("%v", err)
	}
}

// KeepSupervisor keeps a supervisor alive while ctx lasts (supervisor.Keep),
// unless PM_NO_SUPERVISOR is set: what every waiter (pm wait, pm chat
// --follow, pm wait-children, pm log -f) runs beside its wait, so a
// supervisor killed meanwhile is started again without another command.
// stop ends it.
func KeepSupervisor(ctx context.Context, l *agent.Launcher, getenv func(string) string) (stop func()) {
	if l == nil || SupervisorOff(getenv) {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		supervisor.Keep(ctx, l)
	}()
	return func() { cancel(); <-done }
}

// KeepSupervisor is the package's KeepSupervisor for this session.
func (s *Session) KeepSupervisor(ctx context.Context) (stop func()) {
	return KeepSupervisor(ctx, s.Launcher, s.getenv)
}
