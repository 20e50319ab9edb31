package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// Kind is why a person is notified.
type Kind string

// Notification kinds.
const (
	AskHuman Kind = "ask_human"
	TaskDone Kind = "task_done"
	Stalled  Kind = "stalled"
	Failed   Kind = "failed"
	Budget   Kind = "budget"
)

// Event is what notify.command reads on its stdin, one JSON object.
type Event struct {
	Kind     Kind      `json:"kind"`
	Time     time.Time `json:"time"`
	Project  string    `json:"project"`
	Task     string    `json:"task,omitempty"`
	Agent    string    `json:"agent,omitempty"`
	Request  string    `json:"request,omitempty"`
	Text     string    `json:"text,omitempty"` // the question, the reason, the task's description
	ExitCode *int      `json:"exit_code,omitempty"`
	Next     string    `json:"next,omitempty"` // the command a person would run
	Bus      bus.Kind  `json:"bus_kind"`       // the bus event it comes from
}

// Classify turns a bus event into a notification, if it is one.
func Classify(s *store.Store, st state.State, ev bus.Event) (Event, bool) {
	n := Event{Time: ev.Time, Project: s.ProjectDir(), Task: ev.TaskID, Agent: ev.Agent, Text: ev.Text, Bus: ev.Kind}
	switch ev.Kind {
	case bus.EvRequestAsked:
		n.Kind = AskHuman
		d, _ := ev.Data.(bus.RequestAsked)
		n.Request = d.Request
		n.Next = "pm answer " + n.Request + " \"...\""
	case bus.EvTaskDone:
		n.Kind = TaskDone
		if t, err := st.Task(ev.TaskID); err == nil {
			n.Text = t.Description
		}
	case bus.EvAgentFailed:
		if d, host := ev.Data.(bus.AgentFailed); host {
			// A host that gave its agent up says so in an owner's request
			// (ask_human) or a budget's agent.budget; an owner that left
			// with exit 0 (it kept ending its turn without pm done) is
			// stalled, as when its end was an agent.exited.
			return stalled(s, st, ev, n, d.ExitCode)
		}
		n.Kind, n.Next = Failed, "pm logs "+ev.Agent
	case bus.EvAgentBudget:
		n.Kind, n.Next = Budget, "pm logs "+ev.Agent
	case bus.EvAgentExited:
		d, ok := ev.Data.(bus.AgentExited)
		if !ok {
			return Event{}, false
		}
		return stalled(s, st, ev, n, d.ExitCode)
	default:
		return Event{}, false
	}
	return n, true
}

// stalled: an owner that left with exit 0 while its task is still active
// will not be restarted (a crash would be, or end as failed): nobody works
// on the task any more.
func stalled(s *store.Store, st state.State, ev bus.Event, n Event, code int) (Event, bool) {
	if code != 0 || ev.TaskID == "" {
		return Event{}, false
	}
	t, err := st.Task(ev.TaskID)
	if err != nil || t.Owner != ev.Agent || t.Status != store.TaskActive {
		return Event{}, false
	}
	h := task.HealthOf(s, st, t, nil)
	if h.State != task.StateStalled {
		return Event{}, false
	}
	n.Kind, n.Text, n.ExitCode, n.Next = Stalled, h.Reason, h.ExitCode, h.Next
	return n, true
}

// Notifier runs notify.command for each notification on the bus.
type Notifier struct {
	Store *store.Store
	State state.State // the store's records
	Log   *slog.Logger
	// Exec runs one command with the event on stdin; nil: Run.
	Exec func(ctx context.Context, argv []string, stdin []byte) error

	mu  sync.Mutex
	pos *bus.Cursor // where this notifier got to on the bus
}

// Follow notifies every event after the saved cursor (with none, from the
// bus's end: nothing was asked to be notified before) until ctx ends.
func (n *Notifier) Follow(ctx context.Context) error {
	from, err := n.start()
	if err != nil {
		return err
	}
	for d, err := range n.Store.Bus().Subscribe(ctx, from) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		n.handle(ctx, d)
	}
	return nil
}

// catchUpLimit bounds CatchUp: the bus's last line may be torn, so the end
// it aims for may never be delivered.
const catchUpLimit = 30 * time.Second

// CatchUp notifies what the bus holds past where Follow stopped (or the
// saved cursor) now, then returns: the supervisor calls it on its way out,
// so the last task.done is not left for a later run.
func (n *Notifier) CatchUp(ctx context.Context) error {
	from, err := n.start()
	if err != nil {
		return err
	}
	_, end, err := n.Store.Bus().Tail(0)
	if err != nil || from == end {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, catchUpLimit)
	defer cancel()
	for d, err := range n.Store.Bus().Subscribe(ctx, from) {
		if err != nil {
			return err
		}
		n.handle(ctx, d)
		if d.Next == end {
			return nil
		}
	}
	return nil
}

// start is where to read from: where this notifier got to, else the saved
// cursor, else the bus's end.
func (n *Notifier) start() (bus.Cursor, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pos != nil {
		return *n.pos, nil
	}
	c, ok := n.Store.NotifyCursor()
	if !ok {
		var err error
		if _, c, err = n.Store.Bus().Tail(0); err != nil {
			return bus.Cursor{}, err
		}
	}
	n.pos = &c
	return c, nil
}

// handle notifies d if it is a notification. The cursor is saved on disk
// only after a notification was sent (most events are none, and a restart
// re-reading those costs little); in memory it always moves on.
func (n *Notifier) handle(ctx context.Context, d bus.Delivery) {
	if ev, ok := Classify(n.Store, n.State, d.Event); ok && n.send(ctx, ev) {
		if err := n.Store.SetNotifyCursor(d.Next); err != nil {
			n.Log.Error("notify: save cursor", "err", err)
		}
	}
	n.mu.Lock()
	n.pos = &d.Next
	n.mu.Unlock()
}

// send runs the command for ev; it reports whether one was configured.
func (n *Notifier) send(ctx context.Context, ev Event) bool {
	cfg, err := config.LoadConfig(n.Store.ConfigPath())
	if err != nil || len(cfg.Notify.Command) == 0 {
		return false // no command (or a config being edited): nothing to run
	}
	data, _ := json.Marshal(ev)
	// Only the timeout ends a run: a notifier told to stop (the supervisor
	// leaving) finishes the notification it is sending first.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Notify.Timeout())
	defer cancel()
	run := n.Exec
	if run == nil {
		run = Run
	}
	if err := run(ctx, cfg.Notify.Command, append(data, '\n')); err != nil {
		n.Log.Error("notify: command failed", "kind", ev.Kind, "task", ev.Task, "err", err)
		return true
	}
	n.Log.Info("notified", "kind", ev.Kind, "task", ev.Task, "agent", ev.Agent)
	return true
}

// Run runs argv with stdin in its own process group, killed as a group
// when ctx ends (the timeout), so a notifier that forks cannot linger.
func Run(ctx context.Context, argv []string, stdin []byte) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd.Run()
}
