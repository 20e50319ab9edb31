package tui

import (
	"context"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render/taskview"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// Room is an active phase with its message count and last messages.
type Room struct {
	Phase *store.Phase
	Count int
	Last  []store.Message
	// LastActivity is when the room last changed (task.RoomLastActivity).
	LastActivity time.Time
}

// TopData is what pm top shows, read at once.
type TopData struct {
	Tasks    []*store.Task
	Health   map[string]task.Health // by task id: its state and what explains it
	Rooms    []Room
	Agents   []*store.Agent
	Requests []*request.Request
	Spend    ops.CostsResult // dollars against budgets (topcost.go)
	// AgentActivity is each agent's last activity (task.AgentLastActivity);
	// Now is when the snapshot was read.
	AgentActivity map[string]time.Time
	Now           time.Time
}

// TopBackend is everything pm top reads and does; TopFromSession is the
// real one (internal/ops).
type TopBackend struct {
	Backend
	Snapshot func(ctx context.Context) (TopData, error)
	Kill     func(ctx context.Context, task string, restart bool) error
	EndPhase func(ctx context.Context, task string) error
	// Detail is Enter's view of a task: pm status tk-.. and its last events.
	Detail func(ctx context.Context, task string) ([]string, error)
}

// detailEvents is how many of a task's last events its view shows.
const detailEvents = 30

// roomTail is how many of a room's last messages pm top shows.
const roomTail = 2

// TopFromSession is the backend of pm top: every call one ops function.
func TopFromSession(sess *ops.Session) TopBackend {
	return TopBackend{
		Backend:  FromSession(sess),
		Snapshot: func(ctx context.Context) (TopData, error) { return snapshot(ctx, sess) },
		Kill: func(ctx context.Context, task string, restart bool) error {
			_, err := ops.Kill(ctx, sess, ops.KillInput{Task: task, Restart: restart})
			return err
		},
		EndPhase: func(ctx context.Context, task string) error {
			_, err := ops.EndPhase(ctx, sess, ops.EndInput{Task: task})
			return err
		},
		Detail: func(ctx context.Context, id string) ([]string, error) { return detail(ctx, sess, id) },
	}
}

// detail renders a task as pm status tk-.. does, then its last events.
func detail(ctx context.Context, sess *ops.Session, id string) ([]string, error) {
	res, err := ops.Status(ctx, sess, ops.StatusInput{Task: id})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	taskview.PrintTaskView(&b, res.View.View, res.View.Health, res.View.Requests, sess.Actor)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	past, _, err := sess.Store.Bus().TailWhere(detailEvents, func(ev bus.Event) bool { return ev.TaskID == id })
	if err != nil {
		return nil, err
	}
	lines = append(lines, "", "last events:")
	for _, d := range past {
		lines = append(lines, "  "+eventLine(d.Event, time.Local))
	}
	return lines, nil
}

func snapshot(ctx context.Context, sess *ops.Session) (TopData, error) {
	var d TopData
	st, err := ops.Status(ctx, sess, ops.StatusInput{All: true})
	if err != nil {
		return d, err
	}
	d.Tasks, d.Health = liveFirst(st.Summary.Tasks), st.Summary.Health
	for _, t := range d.Tasks {
		if !t.Live() {
			continue
		}
		v, err := ops.Status(ctx, sess, ops.StatusInput{Task: t.ID})
		if err != nil {
			return d, err
		}
		for _, ph := range v.View.Phases {
			if ph.Status != store.PhaseActive {
				continue
			}
			chat, err := ops.Chat(ctx, sess, ops.ChatInput{Phase: ph.ID})
			if err != nil {
				return d, err
			}
			d.Rooms = append(d.Rooms, Room{Phase: ph.Phase, Count: ph.Messages, Last: chat.Messages[max(len(chat.Messages)-roomTail, 0):], LastActivity: ph.LastActivity})
		}
	}
	agents, err := ops.Agents(ctx, sess, ops.AgentsInput{})
	if err != nil {
		return d, err
	}
	d.Agents = agents.Agents
	d.Spend = spend(ctx, sess)
	d.Now, d.AgentActivity = sess.Store.Now(), map[string]time.Time{}
	for _, a := range d.Agents {
		d.AgentActivity[a.Name] = task.AgentLastActivity(sess.Store, a)
	}
	d.Requests, err = ops.Requests(ctx, sess, ops.RequestsInput{})
	return d, err
}
