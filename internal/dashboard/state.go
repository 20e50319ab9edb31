package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/msglog"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// Snapshot is GET /api/state: what the page draws, and the cursor to follow
// the bus from.
type Snapshot struct {
	// Cursor was taken before anything else was read: events after it may
	// already show in the snapshot, none is missing from it.
	Cursor   bus.Cursor               `json:"cursor"`
	Tasks    []*store.Task            `json:"tasks"`
	Health   map[string]task.Health   `json:"health"` // by task id, for the tasks listed
	Counts   map[store.TaskStatus]int `json:"counts"`
	Total    int                      `json:"total"`
	Agents   []*store.Agent           `json:"agents"`
	Requests []*request.Request       `json:"requests"`
	Prompts  []ops.PromptEntry        `json:"prompts"`
	Rooms    []RoomView               `json:"rooms"`
	// Budgets are the configured limits usage is drawn against.
	Budgets config.Budgets `json:"budgets"`
	// Windows are the project's dollars over its budget windows (last hour,
	// 24 hours) against their caps (ops.Spend); unknown stays unknown.
	Windows []ops.Window `json:"windows"`
	// Costs are each task's and each agent's dollars from the cost ledger
	// (what pm costs prints), against budgets.task and budgets.agent max_usd.
	Costs Costs `json:"costs"`
	// Log is the last events of the bus, oldest first, each with its
	// message-log line when it has one.
	Log []LogEntry `json:"log"`
}

// LogEntry is one event of the snapshot's log: the event as stored and its
// line in the message log (internal/msglog), as the websocket sends them.
type LogEntry struct {
	Event json.RawMessage `json:"event"`
	Line  *msglog.Line    `json:"line,omitempty"`
}

// Limits of a snapshot: the page pages and tails, it never asks for all.
const (
	defaultTasks = 1000
	maxTasks     = 10000
	defaultLog   = 200
	maxLog       = 2000
	roomTail     = 50
)

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err1 := intParam(q.Get("limit"), defaultTasks, maxTasks)
	logN, err2 := intParam(q.Get("log"), defaultLog, maxLog)
	if err1 != nil || err2 != nil {
		writeError(w, http.StatusBadRequest, "limit and log are counts")
		return
	}
	s.stateReads.Add(1)
	snap, err := s.snapshot(r, q.Get("all") != "", limit, logN)
	if err != nil {
		writeOpError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

func (s *Server) snapshot(r *http.Request, all bool, limit, logN int) (*Snapshot, error) {
	ctx := r.Context()
	tail, cur, err := s.sess.Store.Bus().Tail(logN)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Cursor: cur, Log: make([]LogEntry, 0, len(tail)), Budgets: s.sess.Store.Config().Budgets}
	snap.Windows, snap.Costs = spend(ctx, s.sess)
	lines := msglog.NewCascade()
	for _, d := range tail {
		snap.Log = append(snap.Log, LogEntry{Event: json.RawMessage(d.Raw), Line: lineOf(lines, d.Event)})
	}
	// The sections are independent reads, each a scan of its own records:
	// read them at once (the cursor above was taken before all of them).
	var wg sync.WaitGroup
	var errTasks, errAgents, errRest error
	wg.Go(func() { errTasks = s.readTasks(r, snap, all, limit) })
	wg.Go(func() {
		var agents ops.AgentsResult
		if s.agents != nil {
			agents, errAgents = s.agents.list(ctx, s.sess.State, cur, all)
		} else {
			agents, errAgents = ops.Agents(ctx, s.sess, ops.AgentsInput{All: all})
		}
		snap.Agents = agents.Agents
	})
	wg.Go(func() {
		if snap.Requests, errRest = ops.Requests(ctx, s.sess, ops.RequestsInput{}); errRest == nil {
			snap.Prompts, errRest = ops.Prompts(ctx, s.sess, ops.PromptsInput{})
		}
	})
	wg.Wait()
	return snap, errors.Join(errTasks, errAgents, errRest)
}

// readTasks fills the snapshot's tasks, their health and counts, and the
// rooms of the live ones.
func (s *Server) readTasks(r *http.Request, snap *Snapshot, all bool, limit int) error {
	st, err := ops.Status(r.Context(), s.sess, ops.StatusInput{All: all})
	if err != nil {
		return err
	}
	snap.Tasks, snap.Counts, snap.Total = newest(st.Summary.Tasks, limit), st.Summary.Counts, st.Summary.Total
	snap.Health = make(map[string]task.Health, len(snap.Tasks))
	for _, t := range snap.Tasks {
		snap.Health[t.ID] = st.Summary.Health[t.ID]
	}
	snap.Rooms, err = s.liveRooms(r, st.Summary.Tasks)
	return err
}

// liveRooms is every phase of the live tasks among tasks (read already:
// the state is not scanned twice), active ones with their last messages,
// their last activity and who is typing; closed phases are counted, not
// read (their history is in the task's detail).
func (s *Server) liveRooms(r *http.Request, tasks []*store.Task) ([]RoomView, error) {
	rooms, err := ops.LiveRooms(r.Context(), s.sess, tasks, roomTail)
	if err != nil {
		return nil, err
	}
	out := make([]RoomView, 0, len(rooms))
	for _, room := range rooms {
		out = append(out, roomView(s.sess, room))
	}
	return out, nil
}

// newest keeps the last n tasks (tasks are listed oldest first).
func newest(tasks []*store.Task, n int) []*store.Task {
	if len(tasks) > n {
		return tasks[len(tasks)-n:]
	}
	return tasks
}

func intParam(v string, def, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, strconv.ErrSyntax
	}
	return min(n, max), nil
}

// lineOf is ev's message-log line, or nil when ev is not a message.
func lineOf(c *msglog.Cascade, ev bus.Event) *msglog.Line {
	if l, ok := c.Line(ev); ok {
		return &l
	}
	return nil
}

// Costs are the ledger's sums by task id and by agent name (ops.Costs),
// each with the cap that applies: a sum with entries of no price says
// unknown, never $0.
type Costs struct {
	Tasks  map[string]ops.CostLine `json:"tasks"`
	Agents map[string]ops.CostLine `json:"agents"`
}

// spend is the project's windows and the per-task and per-agent costs for
// a snapshot, from one read of the ledger: none when it cannot be read
// (the rest of the page still draws).
func spend(ctx context.Context, sess *ops.Session) ([]ops.Window, Costs) {
	c := Costs{Tasks: map[string]ops.CostLine{}, Agents: map[string]ops.CostLine{}}
	res, err := ops.Spend(ctx, sess, ops.CostsInput{})
	if err != nil {
		return []ops.Window{}, c
	}
	for _, l := range res.Tasks {
		c.Tasks[l.Task] = l
	}
	for _, l := range res.Agents {
		c.Agents[l.Name] = l
	}
	return res.Windows, c
}
