package agent

import (
	"context"
	"slices"
	"sync"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// What an agent is doing, as its record's Activity says (the dashboard's
// "is typing", pm status's last activity): working (a model call in
// flight, or an exec agent's CLI running and not blocked in a pm command
// that waits), waiting (blocked until someone else acts) or idle.
const (
	ActivityWorking = "working"
	ActivityWaiting = "waiting"
	ActivityIdle    = "idle"
)

// SetActivity records what agent name is doing and, when that changed,
// puts it on the bus (agent.activity; pm wait and other task followers
// skip it, see ops.ChangesState). The one writer of Activity for both
// runtimes. Best effort: a record that cannot be written loses the mark,
// not the agent's work.
func SetActivity(s *store.Store, st state.Agents, name, what string) {
	now := s.Now().UTC()
	var changed bool
	a, err := st.UpdateAgent(name, func(x *store.Agent) error {
		changed = x.Activity != what
		x.Activity, x.ActiveAt = what, &now
		return nil
	})
	if err == nil && changed {
		s.Notify(bus.Event{Kind: bus.EvAgentActivity, Actor: a.Name, Agent: a.Name, TaskID: a.TaskID, PhaseID: a.PhaseID, Text: what})
	}
}

// waitingCommand reports whether args (a brokered pm command line, the
// command first: the broker refuses a flag before it) blocks until
// someone else acts: pm wait, pm wait-children, pm chat --wait or
// --follow, pm call (until the object answers).
func waitingCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "wait", "wait-children", "call":
		return true
	case "chat":
		return slices.ContainsFunc(args[1:], func(a string) bool {
			return a == "--wait" || a == "--follow" || a == "-f" || a == "--wait=true" || a == "--follow=true"
		})
	}
	return false
}

// execActivity keeps an exec agent's Activity while its CLI runs: working,
// except while every command it has in flight through its broker is one
// that waits (waitingCommand).
type execActivity struct {
	set     func(what string)
	mu      sync.Mutex
	running bool // the CLI runs: between start and end
	waiting int  // brokered commands in flight that wait
}

// start marks the CLI's run begun: working.
func (e *execActivity) start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running = true
	e.set(ActivityWorking)
}

// end marks the CLI's run over: idle, whatever a command still finishing
// would say.
func (e *execActivity) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running = false
	e.set(ActivityIdle)
}

// wrap is run with the agent's activity kept around each command.
func (e *execActivity) wrap(run broker.Runner) broker.Runner {
	return func(ctx context.Context, args []string, stdio broker.Stdio) int {
		if !waitingCommand(args) {
			return run(ctx, args, stdio)
		}
		e.mu.Lock()
		if e.waiting++; e.waiting == 1 && e.running {
			e.set(ActivityWaiting)
		}
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			if e.waiting--; e.waiting == 0 && e.running {
				e.set(ActivityWorking)
			}
			e.mu.Unlock()
		}()
		return run(ctx, args, stdio)
	}
}
