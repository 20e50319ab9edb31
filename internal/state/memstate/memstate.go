package memstate

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
)

// Mem is a project's state in memory. The zero value is not ready: use New.
type Mem struct {
	Now func() time.Time // stamps a close WithPhase writes
	IDs ids.Source
	// Bounds are the agents' transcripts' and reply streams' totals
	// (zero: the defaults); set before use.
	Bounds state.LogBounds

	tasksMu sync.Mutex // WithTasks

	mu       sync.Mutex // guards everything below
	tasks    map[string][]byte
	contexts map[string][]byte
	phases   map[string]*phaseRec // by phase id
	phasesMu map[string]*sync.Mutex
	roomMu   map[string]*sync.Mutex
	agents   map[string][]byte
	boxes    map[string][][]byte // mailbox entries; a position is an index
	cursors  map[string]int64
	requests map[string][]byte
	designs  map[string]*design
	prompts  map[string][]byte                // prompt objects by name (sub "" only)
	seen     map[string]int                   // seen marks by agent + " " + phase id
	progress map[string][]state.PhaseProgress // by task id
	changed  chan struct{}                    // closed and replaced on every write
	logs     agentLogs                        // transcripts, reply streams, costs (agentlogs.go)
}

type phaseRec struct {
	taskID   string
	rec      []byte
	messages []state.Message
}

type design struct {
	state  []byte
	log    [][]byte
	copy   []byte // the working copy of its file
	locked bool   // TryLockDesign's run lock is held
}

var _ state.State = (*Mem)(nil)

// New is an empty project.
func New() *Mem {
	return &Mem{
		Now: time.Now, IDs: ids.Default,
		tasks: map[string][]byte{}, contexts: map[string][]byte{}, phases: map[string]*phaseRec{},
		phasesMu: map[string]*sync.Mutex{}, roomMu: map[string]*sync.Mutex{},
		agents: map[string][]byte{}, boxes: map[string][][]byte{}, cursors: map[string]int64{},
		requests: map[string][]byte{}, designs: map[string]*design{}, prompts: map[string][]byte{},
		seen: map[string]int{}, progress: map[string][]state.PhaseProgress{},
		changed: make(chan struct{}), logs: newAgentLogs(),
	}
}

// Records are kept encoded, as every backend keeps them: a caller's later
// change to a record it was given or handed in never reaches the state.
func enc(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // records always encode
	}
	return b
}

func dec[T any](b []byte) *T {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		panic(err) // encoded by enc
	}
	return &v
}

// wrote wakes every Watch; the caller holds mu.
func (m *Mem) wrote() {
	close(m.changed)
	m.changed = make(chan struct{})
}

func notFound(try, format string, args ...any) error {
	return state.Errorf(state.ErrNotFound, try, format, args...)
}

func (m *Mem) freshID(kind string, taken func(string) bool) string {
	for {
		if id := m.IDs.New(kind); !taken(id) {
			return id
		}
	}
}

// update is the read-modify-write of one encoded record; the caller holds mu.
func update[T any](m *Mem, recs map[string][]byte, id string, missing error, fn func(*T) error) (*T, error) {
	b, ok := recs[id]
	if !ok {
		return nil, missing
	}
	v := dec[T](b)
	if err := fn(v); err == state.ErrUnchanged {
		return dec[T](b), nil
	} else if err != nil {
		return nil, err
	}
	recs[id] = enc(v)
	m.wrote()
	return dec[T](recs[id]), nil
}

// Tasks.

func (m *Mem) Task(id string) (*state.Task, error) {
	if err := state.CheckID(ids.Task, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.taskHeld(id)
}

func (m *Mem) taskHeld(id string) (*state.Task, error) {
	b, ok := m.tasks[id]
	if !ok {
		return nil, notFound("see 'pm status' for the tasks that exist", "no task %s", id)
	}
	return dec[state.Task](b), nil
}

func (m *Mem) Tasks() ([]*state.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*state.Task, 0, len(m.tasks))
	for _, b := range m.tasks {
		out = append(out, dec[state.Task](b))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func (m *Mem) LiveTasks() ([]*state.Task, error) {
	all, err := m.Tasks()
	if err != nil {
		return nil, err
	}
	live, _ := state.Count(all, false)
	return live, nil
}

func (m *Mem) CountTasks(all bool) ([]*state.Task, map[state.TaskStatus]int, error) {
	tasks, err := m.Tasks()
	if err != nil {
		return nil, nil, err
	}
	out, counts := state.Count(tasks, all)
	return out, counts, nil
}

func (m *Mem) WithTasks(fn func() error) error {
	m.tasksMu.Lock()
	defer m.tasksMu.Unlock()
	return fn()
}

// CreateTask runs inside WithTasks, which keeps two creations from drawing
// the same fresh id.
func (m *Mem) CreateTask(build func(id string) (*state.Task, []byte, error)) (*state.Task, error) {
	m.mu.Lock()
	id := m.freshID(ids.Task, func(c string) bool { _, ok := m.tasks[c]; return ok })
	m.mu.Unlock()
	t, context, err := build(id)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// The reverse edges and the record land together: no reader sees one
	// without the other.
	link := func(pid string, fn func(p *state.Task)) {
		if b, ok := m.tasks[pid]; ok {
			p := dec[state.Task](b)
			fn(p)
			m.tasks[pid] = enc(p)
		}
	}
	if t.ParentID != "" {
		link(t.ParentID, func(p *state.Task) { p.Children = appendOnce(p.Children, t.ID) })
	}
	for _, b := range t.BlockedBy {
		link(b, func(p *state.Task) { p.Blocks = appendOnce(p.Blocks, t.ID) })
	}
	if len(context) > 0 {
		m.contexts[t.ID] = append([]byte(nil), context...)
	}
	m.tasks[t.ID] = enc(t)
	m.wrote()
	return dec[state.Task](m.tasks[t.ID]), nil
}

func appendOnce(list []string, id string) []string {
	for _, x := range list {
		if x == id {
			return list
		}
	}
	return append(list, id)
}

func (m *Mem) UpdateTask(id string, fn func(t *state.Task) error) (*state.Task, error) {
	if err := state.CheckID(ids.Task, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return update(m, m.tasks, id, notFound("see 'pm status' for the tasks that exist", "no task %s", id), fn)
}

func (m *Mem) Context(taskID string) ([]byte, error) {
	if _, err := m.Task(taskID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.contexts[taskID]...), nil
}

func (m *Mem) IDsWithPrefix(kind, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := map[string][]byte(nil)
	switch kind {
	case ids.Task:
		recs = m.tasks
	case ids.Request:
		recs = m.requests
	}
	var out []string
	for id := range recs {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *Mem) ResetHeld() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tasks, m.contexts, m.phases = map[string][]byte{}, map[string][]byte{}, map[string]*phaseRec{}
	m.requests, m.progress = map[string][]byte{}, map[string][]state.PhaseProgress{}
	m.wrote()
	return nil
}

// Phases.

func (m *Mem) Phase(taskID, phaseID string) (*state.Phase, error) {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return nil, err
	}
	p, err := m.FindPhase(phaseID)
	if err != nil {
		return nil, err
	}
	if p.TaskID != taskID {
		return nil, notFound("see 'pm status' for the phases that exist", "no phase %s in task %s", phaseID, taskID)
	}
	return p, nil
}

func (m *Mem) FindPhase(phaseID string) (*state.Phase, error) {
	if err := state.CheckID(ids.Phase, phaseID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.phases[phaseID]
	if !ok {
		return nil, notFound("see 'pm status' for the phases that exist", "no phase %s", phaseID)
	}
	return m.derivedHeld(r), nil
}

// derivedHeld is the record with its room's derived status (RoomClosedBy);
// the caller holds mu.
func (m *Mem) derivedHeld(r *phaseRec) *state.Phase {
	p := dec[state.Phase](r.rec)
	var status state.TaskStatus
	if t, err := m.taskHeld(r.taskID); err == nil {
		status = t.Status
	}
	if reason := state.RoomClosedBy(p, len(r.messages), status); reason != "" && p.Status == state.PhaseActive {
		p.Status, p.CloseReason = state.PhaseClosed, reason
	}
	return p
}

func (m *Mem) Phases(taskID string) ([]*state.Phase, error) {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*state.Phase
	for _, r := range m.phases {
		if r.taskID == taskID {
			out = append(out, m.derivedHeld(r))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// section is the mutex of a named critical section, made on first use.
func (m *Mem) section(set map[string]*sync.Mutex, key string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	mu, ok := set[key]
	if !ok {
		mu = &sync.Mutex{}
		set[key] = mu
	}
	return mu
}

func (m *Mem) WithPhases(taskID string, fn func() error) error {
	if _, err := m.Task(taskID); err != nil {
		return err
	}
	mu := m.section(m.phasesMu, taskID)
	mu.Lock()
	defer mu.Unlock()
	return fn()
}

func (m *Mem) CreatePhase(taskID string, build func(t *state.Task, existing []*state.Phase, id string) (*state.Phase, error), then func(ph *state.Phase) error) (*state.Phase, error) {
	var out *state.Phase
	err := m.WithPhases(taskID, func() error {
		t, err := m.Task(taskID)
		if err != nil {
			return err
		}
		existing, err := m.Phases(taskID)
		if err != nil {
			return err
		}
		m.mu.Lock()
		id := m.freshID(ids.Phase, func(c string) bool { _, ok := m.phases[c]; return ok })
		m.mu.Unlock()
		ph, err := build(t, existing, id)
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.phases[id] = &phaseRec{taskID: taskID, rec: enc(ph)}
		out = dec[state.Phase](m.phases[id].rec)
		m.wrote()
		m.mu.Unlock()
		if then != nil {
			return then(out)
		}
		return nil
	})
	return out, err
}

func (m *Mem) UpdatePhase(taskID, phaseID string, fn func(p *state.Phase)) (*state.Phase, error) {
	if _, err := m.Phase(taskID, phaseID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.updatePhaseHeld(phaseID, fn), nil
}

func (m *Mem) updatePhaseHeld(phaseID string, fn func(p *state.Phase)) *state.Phase {
	r := m.phases[phaseID]
	p := dec[state.Phase](r.rec)
	fn(p)
	r.rec = enc(p)
	m.wrote()
	return dec[state.Phase](r.rec)
}

func (m *Mem) WithPhase(taskID, phaseID string, fn func(tx state.RoomTx) error) error {
	if _, err := m.Phase(taskID, phaseID); err != nil {
		return err
	}
	mu := m.section(m.roomMu, phaseID)
	mu.Lock()
	defer mu.Unlock()
	m.mu.Lock()
	r := m.phases[phaseID]
	stored := dec[state.Phase](r.rec)
	derived := m.derivedHeld(r)
	if stored.Status == state.PhaseActive && derived.Status != state.PhaseActive {
		now := m.Now().UTC()
		stored = m.updatePhaseHeld(phaseID, func(p *state.Phase) {
			p.Status, p.ClosedAt, p.CloseReason = state.PhaseClosed, &now, derived.CloseReason
		})
	}
	m.mu.Unlock()
	return fn(&roomTx{m: m, phase: stored})
}

// roomTx holds the room's section; every access to the record and log
// takes mu too, since readers do not take the section.
type roomTx struct {
	m     *Mem
	phase *state.Phase
}

func (tx *roomTx) Phase() *state.Phase { return tx.phase }

func (tx *roomTx) Count() (int, error) {
	tx.m.mu.Lock()
	defer tx.m.mu.Unlock()
	return len(tx.m.phases[tx.phase.ID].messages), nil
}

func (tx *roomTx) Append(msg state.Message) error {
	tx.m.mu.Lock()
	defer tx.m.mu.Unlock()
	r := tx.m.phases[tx.phase.ID]
	if tx.phase.Status != state.PhaseActive {
		return state.Errorf(state.ErrClosed, "the owner may open a new phase", "phase %s is closed (%s)", tx.phase.ID, tx.phase.CloseReason)
	}
	if len(r.messages) >= tx.phase.MessageLimit {
		return state.Errorf(state.ErrRoomFull, "the owner may open a new phase", "phase %s holds its %d messages", tx.phase.ID, tx.phase.MessageLimit)
	}
	r.messages = append(r.messages, *dec[state.Message](enc(msg)))
	tx.m.wrote()
	return nil
}

func (tx *roomTx) Update(fn func(p *state.Phase)) error {
	tx.m.mu.Lock()
	defer tx.m.mu.Unlock()
	tx.phase = tx.m.updatePhaseHeld(tx.phase.ID, fn)
	return nil
}

func (m *Mem) Messages(taskID, phaseID string) ([]state.Message, error) {
	if _, err := m.Phase(taskID, phaseID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]state.Message(nil), m.phases[phaseID].messages...), nil
}

func (m *Mem) MessageCount(taskID, phaseID string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.phases[phaseID]; r != nil && r.taskID == taskID {
		return len(r.messages), nil
	}
	return 0, nil
}

// room is the messages of a room as they stand (nil when unknown).
func (m *Mem) room(taskID, phaseID string) []state.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.phases[phaseID]; r != nil && r.taskID == taskID {
		return r.messages[:len(r.messages):len(r.messages)] // appends never reach what was read
	}
	return nil
}

// ReadRoom hands on each message encoded, as a backend that keeps them
// encoded would (decoded into v first when given).
func (m *Mem) ReadRoom(taskID, phaseID string, from int, v *state.MessageView, fn func(raw []byte) error) (int, error) {
	msgs := m.room(taskID, phaseID)
	pos := max(from, 0)
	for ; pos < len(msgs); pos++ {
		raw := enc(msgs[pos])
		if v != nil && !v.DecodeLine(raw) {
			continue
		}
		if err := fn(raw); err != nil {
			return pos + 1, err
		}
	}
	return max(pos, from), nil
}

// FollowRoom reads again after every write (Watch's channel).
func (m *Mem) FollowRoom(ctx context.Context, taskID, phaseID string, from int, until func() (bool, error), fn func(raw []byte) error) (int, error) {
	return state.FollowRoomByWatch(ctx, m, taskID, phaseID, from, until, fn)
}

func (m *Mem) LastMessages(taskID, phaseID string, n int) ([]state.Message, int, error) {
	msgs := m.room(taskID, phaseID)
	return append([]state.Message{}, msgs[max(len(msgs)-n, 0):]...), len(msgs), nil
}

func (m *Mem) PhasesProgress(taskID string) ([]state.PhaseProgress, error) {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.progress[taskID]), nil
}

func (m *Mem) AppendPhaseProgress(taskID string, p state.PhaseProgress) error {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.progress[taskID]
	if len(list) > 0 && list[len(list)-1].Phase == p.Phase {
		return nil
	}
	m.progress[taskID] = append(list, p)
	m.wrote()
	return nil
}

// Agents.

func noAgent(name string) error {
	return notFound("see 'pm agents' for the agents that exist", "no agent %s", name)
}

func (m *Mem) Agent(name string) (*state.Agent, error) {
	if err := state.CheckName(name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.agents[name]
	if !ok {
		return nil, noAgent(name)
	}
	return dec[state.Agent](b), nil
}

// AgentsChecked: a record in memory cannot tear.
func (m *Mem) AgentsChecked() ([]*state.Agent, []string, error) {
	as, err := m.Agents()
	return as, nil, err
}

func (m *Mem) Agents() ([]*state.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*state.Agent, 0, len(m.agents))
	for _, b := range m.agents {
		out = append(out, dec[state.Agent](b))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (m *Mem) CreateAgent(a *state.Agent) (bool, error) {
	if err := state.CheckName(a.Name); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.agents[a.Name]; ok {
		return false, nil
	}
	m.agents[a.Name] = enc(a)
	m.wrote()
	return true, nil
}

func (m *Mem) UpdateAgent(name string, fn func(a *state.Agent) error) (*state.Agent, error) {
	if err := state.CheckName(name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return update(m, m.agents, name, noAgent(name), fn)
}

func (m *Mem) RemoveAgent(name string, fn func(a *state.Agent) error) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var a *state.Agent
	if b, ok := m.agents[name]; ok {
		a = dec[state.Agent](b)
	}
	if err := fn(a); err != nil {
		return err
	}
	delete(m.agents, name)
	delete(m.boxes, name)
	delete(m.cursors, name)
	m.logs.forget(name)
	for k := range m.seen {
		if strings.HasPrefix(k, name+" ") {
			delete(m.seen, k)
		}
	}
	m.wrote()
	return nil
}

// Mailboxes: a position is the index of the next entry.

func (m *Mem) Post(name string, v any) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.boxes[name] = append(m.boxes[name], b)
	m.wrote()
	return nil
}

func (m *Mem) ReadMailbox(name string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return from, err
	}
	m.mu.Lock()
	box := m.boxes[name]
	m.mu.Unlock()
	pos := from
	for ; pos >= 0 && pos < int64(len(box)); pos++ {
		if err := fn(box[pos], pos+1); err != nil {
			return pos + 1, err
		}
	}
	return max(pos, from), nil
}

func (m *Mem) MailboxCursor(name string) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cursors[name], nil
}

func (m *Mem) SetMailboxCursor(name string, pos int64) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cursors[name] = pos
	m.wrote()
	return nil
}

func (m *Mem) MailboxEnd(name string) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.boxes[name])), nil
}

// Requests.

func noRequest(id string) error {
	return notFound("see 'pm requests --all' for the requests that exist", "no request %s", id)
}

func (m *Mem) CreateRequest(r *state.Request) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.ID = m.freshID(ids.Request, func(c string) bool { _, ok := m.requests[c]; return ok })
	m.requests[r.ID] = enc(r)
	m.wrote()
	return nil
}

func (m *Mem) Request(id string) (*state.Request, error) {
	if err := state.CheckID(ids.Request, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.requests[id]
	if !ok {
		return nil, noRequest(id)
	}
	return dec[state.Request](b), nil
}

func (m *Mem) UpdateRequest(id string, fn func(r *state.Request) error) (*state.Request, error) {
	if err := state.CheckID(ids.Request, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return update(m, m.requests, id, noRequest(id), fn)
}

func (m *Mem) Requests() ([]*state.Request, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []*state.Request{}
	for _, b := range m.requests {
		out = append(out, dec[state.Request](b))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Designs.

func (m *Mem) CreateDesign() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.freshID(ids.Design, func(c string) bool { _, ok := m.designs[c]; return ok })
	m.designs[id] = &design{}
	m.wrote()
	return id, nil
}

func (m *Mem) designHeld(id string) (*design, error) {
	if err := state.CheckID(ids.Design, id); err != nil {
		return nil, err
	}
	d, ok := m.designs[id]
	if !ok {
		return nil, notFound("see 'pm designs' for the designs that exist", "no design %s", id)
	}
	return d, nil
}

func (m *Mem) WriteDesign(id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.designHeld(id)
	if err != nil {
		return err
	}
	d.state = b
	m.wrote()
	return nil
}

func (m *Mem) ReadDesign(id string, v any) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.designHeld(id)
	if err == nil && d.state == nil {
		err = notFound("see 'pm designs' for the designs that exist", "no design %s", id)
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(d.state, v)
}

func (m *Mem) AppendDesignLog(id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.designHeld(id)
	if err != nil {
		return err
	}
	d.log = append(d.log, b)
	m.wrote()
	return nil
}

func (m *Mem) DesignIDs() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.designs))
	for id := range m.designs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

func (m *Mem) WriteDesignCopy(id, name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.designHeld(id)
	if err != nil {
		return err
	}
	d.copy = slices.Clone(data)
	m.wrote()
	return nil
}

// TryLockDesign's lock lives as long as the state: a process's memory.
func (m *Mem) TryLockDesign(id string) (func(), bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.designHeld(id)
	if err != nil || d.locked {
		return nil, false, err
	}
	d.locked = true
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			d.locked = false
			m.mu.Unlock()
		})
	}, true, nil
}

// Seen marks.

func (m *Mem) Seen(agent, phaseID string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[agent+" "+phaseID]
}

func (m *Mem) MarkSeen(agent, phaseID string, n int) {
	if state.CheckName(agent) != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := agent + " " + phaseID; n > m.seen[k] {
		m.seen[k] = n
	}
}

// Prompts: the objects CreatePrompt kept, named prompts/NAME.md; nothing
// else writes here, so every other sub holds none.

func (m *Mem) PromptFiles(sub string, fn func(where string, data []byte) error) error {
	if sub != "" {
		if err := state.CheckName(sub); err != nil {
			return err
		}
		return nil
	}
	m.mu.Lock()
	names := make([]string, 0, len(m.prompts))
	for n := range m.prompts {
		names = append(names, n)
	}
	sort.Strings(names)
	datas := make([][]byte, len(names))
	for i, n := range names {
		datas[i] = slices.Clone(m.prompts[n])
	}
	m.mu.Unlock() // fn may call back into the state
	for i, n := range names {
		if err := fn(promptWhere(n), datas[i]); err != nil {
			return err
		}
	}
	return nil
}

func promptWhere(name string) string { return "prompts/" + name + ".md" }

func (m *Mem) CreatePrompt(name string, data []byte) (string, error) {
	if err := state.CheckName(name); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.prompts[name]; ok {
		return "", state.Errorf(state.ErrConflict, "pick another name", "a prompt object %q exists", name)
	}
	m.prompts[name] = slices.Clone(data)
	m.wrote()
	return promptWhere(name), nil
}

func (m *Mem) RemovePrompt(name string) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.prompts[name]; !ok {
		return notFound("see 'pm prompts'", "no prompt object %q", name)
	}
	delete(m.prompts, name)
	m.wrote()
	return nil
}

// Watch re-checks after every write to the state (scope is not narrowed:
// a wake-up for another record is a spurious one, which the contract
// allows).
func (m *Mem) Watch(ctx context.Context, scope state.Scope, check func() (bool, error)) error {
	if scope == (state.Scope{}) {
		return errs.Usagef("", "state.Scope names nothing to watch")
	}
	for {
		m.mu.Lock()
		ch := m.changed
		m.mu.Unlock()
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
