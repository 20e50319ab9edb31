package natsstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/lease"
	"github.com/plasmodium/pm/internal/natsx/natsbus"
	"github.com/plasmodium/pm/internal/natsx/room"
	"github.com/plasmodium/pm/internal/state"
)

// lockTTL is how long a critical section outlives a holder that died;
// a live holder renews it every lockTTL/3 (lease.Keep).
const lockTTL = 10 * time.Second

// State is one project's state on a hub.
type State struct {
	Now func() time.Time // stamps a close WithPhase writes
	IDs ids.Source

	ctx      context.Context // the connection's life: watches and renewals end with it
	c        *natsx.Conn
	names    natsx.Names
	bus      *natsbus.Bus
	close    func() // Dial's: ends the state's life and its connection
	kv       jetstream.KeyValue
	kvStream jetstream.Stream // the bucket's stream, for listing keys
	kvPrefix string           // its subjects' prefix before a key
	bucket   string
	rooms    *room.Rooms
	mail     jetstream.Stream
	mailS    string // mail stream name
	mailP    string // mail subject prefix
	dlog     string // design log subject prefix
	locks    *lease.Leases
	roomS    string // rooms stream name
	roomP    string // rooms subject prefix

	logs agentLogs // transcripts, reply streams, the cost ledger (agentlogs.go)

	// LeaseTTLWanted is the agents' lease TTL this machine asks for
	// (store.lease_seconds) when it makes the bucket; 0 the default.
	LeaseTTLWanted time.Duration
	// EntryLimit bounds one transcript or reply entry (config
	// limits.log_entry_bytes, state.FitEntry; 0: state.MaxEntry), as the
	// files bound theirs.
	EntryLimit int
	// Bounds are the agents' transcripts' and reply streams' totals
	// (config limits.transcript_bytes, limits.reply_bytes; zero: the
	// defaults), kept as logbound.go says.
	Bounds state.LogBounds

	mu    sync.Mutex
	mach  *machines              // machinesOpen's
	local map[string]*sync.Mutex // one per section: this process's waiters queue here first
}

var _ state.State = (*State)(nil)

// Open makes sure project's buckets and streams exist on c's hub and
// returns its state. ctx bounds the state's use (watches, renewals).
func Open(ctx context.Context, c *natsx.Conn, project string) (*State, error) {
	return open(ctx, ctx, c, project)
}

// open makes the project's buckets and streams with setup's requests
// (bounded by the caller: Dial's wait) and returns a state that lives
// as long as life.
func open(setup, life context.Context, c *natsx.Conn, project string) (*State, error) {
	n, err := natsx.ProjectNames(project)
	if err != nil {
		return nil, err
	}
	s := &State{Now: time.Now, IDs: ids.Default, ctx: life, c: c, names: n, bucket: n.Records, local: map[string]*sync.Mutex{},
		mailS: n.Mail, mailP: n.MailPrefix, dlog: n.DesignPrefix, roomS: n.Rooms, roomP: n.RoomPrefix}
	if s.kv, err = records(setup, c, s.bucket); err != nil {
		return nil, fmt.Errorf("natsstate: bucket %s: %w", s.bucket, err)
	}
	s.kvPrefix = "$KV." + s.bucket + "."
	if err = natsx.Do(setup, func(op context.Context) (err error) {
		s.kvStream, err = c.JS.Stream(op, natsx.KVStream(s.bucket))
		return err
	}); err != nil {
		return nil, err
	}
	// A project's rooms stream made now holds its agents' fence subjects
	// too, so a say's room append and its host's fence mark are one
	// atomic batch (fence.go); one made before is taken as it is.
	if s.rooms, err = room.OpenFenced(setup, c, s.roomS, s.roomP, n.FencePrefix); err != nil {
		return nil, err
	}
	if s.mail, err = c.Stream(setup, jetstream.StreamConfig{Name: s.mailS, Subjects: []string{s.mailP + ">"}}); err != nil {
		return nil, err
	}
	if _, err = c.Stream(setup, jetstream.StreamConfig{Name: n.DesignLog, Subjects: []string{s.dlog + ">"}}); err != nil {
		return nil, err
	}
	if s.locks, err = lease.OpenBucket(setup, c, n.Locks, lockTTL); err != nil {
		return nil, err
	}
	if s.bus, err = natsbus.Open(setup, c, project); err != nil {
		return nil, err
	}
	if err = s.openAgentLogs(setup); err != nil {
		return nil, err
	}
	return s, nil
}

// records opens the records' bucket, making it on first use. Its reads go
// to the stream's leader (natsx.Conn.KeyValue): a replica that lags would
// read an older revision, so a read after an acknowledged write could
// miss it (the conformance suite caught it on three nodes).
func records(ctx context.Context, c *natsx.Conn, bucket string) (jetstream.KeyValue, error) {
	return c.KeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1,
		Replicas: c.Replicas(), Storage: jetstream.FileStorage})
}

// Records are stored as their JSON; decoding gives the caller its own copy.
func dec[T any](b []byte) (*T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func notFound(try, format string, args ...any) error {
	return state.Errorf(state.ErrNotFound, try, format, args...)
}

// get reads key: nil, 0 when there is none.
func (s *State) get(key string) ([]byte, uint64, error) {
	var e jetstream.KeyValueEntry
	err := s.do(func(op context.Context) (err error) { e, err = s.kv.Get(op, key); return err })
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return e.Value(), e.Revision(), nil
}

// list reads every key matching filter with its value: the stream names
// the keys that have messages (one request), then each is read from the
// leader; a deleted key reads as none and is left out. (A key-value
// watcher would do it in one consumer, but making a consumer costs more
// than the reads for pm's few records.)
func (s *State) list(filter string) (map[string][]byte, error) {
	info, err := s.keys(filter)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for subj := range info.State.Subjects {
		key := strings.TrimPrefix(subj, s.kvPrefix)
		b, _, err := s.get(key)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out[key] = b
		}
	}
	return out, nil
}

// keys is the records' stream's info with the subjects of the keys that
// match filter.
func (s *State) keys(filter string) (info *jetstream.StreamInfo, err error) {
	err = s.do(func(op context.Context) (err error) {
		info, err = s.kvStream.Info(op, jetstream.WithSubjectFilter(s.kvPrefix+filter))
		return err
	})
	return info, err
}

// update is the compare-and-set read-modify-write of one record.
func update[T any](s *State, key string, missing func() error, fn func(*T) error) (*T, error) {
	for {
		b, rev, err := s.get(key)
		if err != nil {
			return nil, err
		}
		if b == nil {
			return nil, missing()
		}
		v, err := dec[T](b)
		if err != nil {
			return nil, err
		}
		if err := fn(v); errors.Is(err, state.ErrUnchanged) {
			return dec[T](b)
		} else if err != nil {
			return nil, err
		}
		nb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		_, err = s.write(key, nb, rev, false)
		if natsx.WrongLast(err) {
			continue // another update landed first: apply fn to it
		}
		if err != nil {
			return nil, err
		}
		return dec[T](nb)
	}
}

// create writes key only if it does not exist; false when it did.
func (s *State) create(key string, v any) (bool, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	return s.createKey(key, b)
}

func (s *State) freshID(kind, keyPrefix string) (string, error) {
	for {
		id := s.IDs.New(kind)
		b, _, err := s.get(keyPrefix + id)
		if err != nil || b == nil {
			return id, err
		}
	}
}

// section runs fn holding the lock name: first this process's mutex for
// it (so local waiters queue without traffic), then the hub's lease,
// renewed while fn runs.
func (s *State) section(name string, fn func() error) error {
	s.mu.Lock()
	mu, ok := s.local[name]
	if !ok {
		mu = &sync.Mutex{}
		s.local[name] = mu
	}
	s.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	l, err := s.acquire(name)
	if err != nil {
		return err
	}
	kept := lease.Keep(s.ctx, lockTTL, l.Renew, lease.KeepOptions{})
	err = fn()
	kept.Stop()
	if rerr := s.release(l); err == nil && rerr != nil {
		err = state.Mark(fmt.Errorf("critical section %s: %w", name, rerr), state.ErrConflict)
	}
	return err
}

// acquire takes the lock name's lease, waiting while another holds it.
// Its requests ride out a change of leader (natsx/lease: a take whose
// answer was lost is recognised as this one's, by its message id). Not
// inside a natsx.Do of its own: a repeat would be another take, which
// the first one's landing would find held.
func (s *State) acquire(name string) (*lease.Lease, error) {
	for {
		l, err := s.locks.Acquire(s.ctx, name, s.holder())
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, lease.ErrHeld) {
			return nil, err
		}
		if err := s.waitFree(name); err != nil {
			return nil, err
		}
	}
}

// holder names a take of a lock: the node this process reached and an id
// of its own (what pm doctor shows of a held lock).
func (s *State) holder() string { return s.c.NC.ConnectedServerId() + "/" + s.IDs.New(ids.Message) }

// waitFree waits for the lock name to be free, woken by the key's watch
// (lease.WaitFree, bounded by its WaitBound). Still held past it, or the
// hub unanswering, the caller takes the lock again or waits anew: a held
// lock is renewed every third of lockTTL.
func (s *State) waitFree(name string) error {
	err := s.locks.WaitFree(s.ctx, name)
	if errors.Is(err, lease.ErrStillHeld) || (err != nil && s.ctx.Err() == nil && natsx.Transient(err)) {
		return nil // take it again, or wait anew
	}
	return err
}

// release gives l up, riding out a change of leader (natsx/lease: a
// release, or a renewal before it, whose answer was lost is recognised as
// l's own, by its message id).
func (s *State) release(l *lease.Lease) error { return l.Release(s.ctx) }

// byCreated sorts records oldest first, then by id.
func byCreated[T any](out []*T, at func(*T) time.Time, id func(*T) string) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := at(out[i]), at(out[j])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return id(out[i]) < id(out[j])
	})
}

// Tasks.

func noTask(id string) error {
	return notFound("see 'pm status' for the tasks that exist", "no task %s", id)
}

func (s *State) Task(id string) (*state.Task, error) {
	if err := state.CheckID(ids.Task, id); err != nil {
		return nil, err
	}
	b, _, err := s.get("task." + id)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, noTask(id)
	}
	return dec[state.Task](b)
}

func (s *State) LiveTasks() ([]*state.Task, error) {
	all, err := s.Tasks()
	if err != nil {
		return nil, err
	}
	live, _ := state.Count(all, false)
	return live, nil
}

func (s *State) CountTasks(all bool) ([]*state.Task, map[state.TaskStatus]int, error) {
	tasks, err := s.Tasks()
	if err != nil {
		return nil, nil, err
	}
	out, counts := state.Count(tasks, all)
	return out, counts, nil
}

func (s *State) Tasks() ([]*state.Task, error) {
	recs, err := s.list("task.>")
	if err != nil {
		return nil, err
	}
	out := make([]*state.Task, 0, len(recs))
	for _, b := range recs {
		t, err := dec[state.Task](b)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	byCreated(out, func(t *state.Task) time.Time { return t.CreatedAt }, func(t *state.Task) string { return t.ID })
	return out, nil
}

func (s *State) WithTasks(fn func() error) error { return s.section("tasks", fn) }

// CreateTask links the parent and blockers first and writes the record
// last: a reader sees the task only once they name it.
func (s *State) CreateTask(build func(id string) (*state.Task, []byte, error)) (*state.Task, error) {
	id, err := s.freshID(ids.Task, "task.")
	if err != nil {
		return nil, err
	}
	t, context, err := build(id)
	if err != nil {
		return nil, err
	}
	link := func(pid string, fn func(p *state.Task)) error {
		_, err := s.UpdateTask(pid, func(p *state.Task) error { fn(p); return nil })
		if errors.Is(err, state.ErrNotFound) {
			return nil
		}
		return err
	}
	if t.ParentID != "" {
		if err := link(t.ParentID, func(p *state.Task) { p.Children = appendOnce(p.Children, t.ID) }); err != nil {
			return nil, err
		}
	}
	for _, b := range t.BlockedBy {
		if err := link(b, func(p *state.Task) { p.Blocks = appendOnce(p.Blocks, t.ID) }); err != nil {
			return nil, err
		}
	}
	if len(context) > 0 {
		if _, err := s.write("ctx."+t.ID, context, anyRev, false); err != nil {
			return nil, err
		}
	}
	if _, err := s.create("task."+t.ID, t); err != nil {
		return nil, err
	}
	return s.Task(t.ID)
}

func appendOnce(list []string, id string) []string {
	for _, x := range list {
		if x == id {
			return list
		}
	}
	return append(list, id)
}

func (s *State) UpdateTask(id string, fn func(t *state.Task) error) (*state.Task, error) {
	if err := state.CheckID(ids.Task, id); err != nil {
		return nil, err
	}
	return update(s, "task."+id, func() error { return noTask(id) }, fn)
}

func (s *State) Context(taskID string) ([]byte, error) {
	if _, err := s.Task(taskID); err != nil {
		return nil, err
	}
	b, _, err := s.get("ctx." + taskID)
	return b, err
}

// IDsWithPrefix lists the keys of kind's records that start with prefix
// (the stream names the keys that have messages, in one request); each
// match is read, so a key left without a value is not an id. Tasks and
// requests are only ever purged (ResetHeld), so there is none today, and
// a prefix matches few keys.
func (s *State) IDsWithPrefix(kind, prefix string) ([]string, error) {
	keyPrefix := map[string]string{ids.Task: "task.", ids.Request: "req."}[kind]
	if keyPrefix == "" {
		return nil, nil
	}
	info, err := s.keys(keyPrefix + ">")
	if err != nil {
		return nil, err
	}
	var out []string
	for subj := range info.State.Subjects {
		id := strings.TrimPrefix(subj, s.kvPrefix+keyPrefix)
		if !strings.HasPrefix(id, prefix) || ids.Parse(kind, id) != nil {
			continue
		}
		if b, _, err := s.get(keyPrefix + id); err != nil {
			return nil, err
		} else if b != nil {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ResetHeld purges the records' subjects of tasks, contexts, phases,
// requests and phase progress, and the rooms' subjects of the project's
// rooms stream (not the agents' fence marks it may hold: a host still
// running keeps its fence, and a new one takes it over as ever).
//
// A purge repeated (natsx.Do) removes again what the subjects hold: the
// wipe is the same.
func (s *State) ResetHeld() error {
	for _, k := range []string{"task.>", "ctx.>", "phase.>", "req.>", "progress.>"} {
		if err := s.do(func(op context.Context) error { return s.kvStream.Purge(op, jetstream.WithPurgeSubject(s.kvPrefix+k)) }); err != nil {
			return err
		}
	}
	return s.do(func(op context.Context) error {
		rooms, err := s.c.JS.Stream(op, s.roomS)
		if err == nil {
			err = rooms.Purge(op, jetstream.WithPurgeSubject(s.roomP+">"))
		}
		return err
	})
}

// Phases.

func noPhase(id string) error {
	return notFound("see 'pm status' for the phases that exist", "no phase %s", id)
}

func (s *State) roomOf(taskID, phaseID string) string { return taskID + "." + phaseID }

func (s *State) Phase(taskID, phaseID string) (*state.Phase, error) {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return nil, err
	}
	if err := state.CheckID(ids.Phase, phaseID); err != nil {
		return nil, err
	}
	b, _, err := s.get("phase." + taskID + "." + phaseID)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, notFound("see 'pm status' for the phases that exist", "no phase %s in task %s", phaseID, taskID)
	}
	return s.derived(b)
}

// derived is the record with its room's derived status (RoomClosedBy).
func (s *State) derived(b []byte) (*state.Phase, error) {
	p, err := dec[state.Phase](b)
	if err != nil {
		return nil, err
	}
	n, err := s.rooms.Count(s.ctx, s.roomOf(p.TaskID, p.ID))
	if err != nil {
		return nil, err
	}
	var status state.TaskStatus
	if t, err := s.Task(p.TaskID); err == nil {
		status = t.Status
	}
	if reason := state.RoomClosedBy(p, n, status); reason != "" && p.Status == state.PhaseActive {
		p.Status, p.CloseReason = state.PhaseClosed, reason
	}
	return p, nil
}

func (s *State) FindPhase(phaseID string) (*state.Phase, error) {
	if err := state.CheckID(ids.Phase, phaseID); err != nil {
		return nil, err
	}
	recs, err := s.list("phase.*." + phaseID)
	if err != nil {
		return nil, err
	}
	for _, b := range recs {
		return s.derived(b)
	}
	return nil, noPhase(phaseID)
}

func (s *State) Phases(taskID string) ([]*state.Phase, error) {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return nil, err
	}
	recs, err := s.list("phase." + taskID + ".*")
	if err != nil {
		return nil, err
	}
	var out []*state.Phase
	for _, b := range recs {
		p, err := s.derived(b)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	byCreated(out, func(p *state.Phase) time.Time { return p.CreatedAt }, func(p *state.Phase) string { return p.ID })
	return out, nil
}

func (s *State) WithPhases(taskID string, fn func() error) error {
	if _, err := s.Task(taskID); err != nil {
		return err
	}
	return s.section("phases."+taskID, fn)
}

func (s *State) CreatePhase(taskID string, build func(t *state.Task, existing []*state.Phase, id string) (*state.Phase, error), then func(ph *state.Phase) error) (*state.Phase, error) {
	var out *state.Phase
	err := s.WithPhases(taskID, func() error {
		t, err := s.Task(taskID)
		if err != nil {
			return err
		}
		existing, err := s.Phases(taskID)
		if err != nil {
			return err
		}
		id, err := s.freshID(ids.Phase, "phase."+taskID+".")
		if err != nil {
			return err
		}
		ph, err := build(t, existing, id)
		if err != nil {
			return err
		}
		if _, err := s.create("phase."+taskID+"."+id, ph); err != nil {
			return err
		}
		if out, err = s.Phase(taskID, id); err != nil {
			return err
		}
		if then != nil {
			return then(out)
		}
		return nil
	})
	return out, err
}

func (s *State) UpdatePhase(taskID, phaseID string, fn func(p *state.Phase)) (*state.Phase, error) {
	if _, err := s.Phase(taskID, phaseID); err != nil {
		return nil, err
	}
	return update(s, "phase."+taskID+"."+phaseID, func() error { return noPhase(phaseID) }, func(p *state.Phase) error { fn(p); return nil })
}

func (s *State) WithPhase(taskID, phaseID string, fn func(tx state.RoomTx) error) error {
	if _, err := s.Phase(taskID, phaseID); err != nil {
		return err
	}
	return s.section("room."+phaseID, func() error {
		key := "phase." + taskID + "." + phaseID
		b, _, err := s.get(key)
		if err != nil {
			return err
		}
		stored, err := dec[state.Phase](b)
		if err != nil {
			return err
		}
		derived, err := s.derived(b)
		if err != nil {
			return err
		}
		if stored.Status == state.PhaseActive && derived.Status != state.PhaseActive {
			now := s.Now().UTC()
			if stored, err = update(s, key, func() error { return noPhase(phaseID) }, func(p *state.Phase) error {
				p.Status, p.ClosedAt, p.CloseReason = state.PhaseClosed, &now, derived.CloseReason
				return nil
			}); err != nil {
				return err
			}
		}
		return fn(&roomTx{s: s, key: key, phase: stored})
	})
}

// roomTx runs inside the room's section; the stream still refuses any
// message past the limit (natsx/room), so a section lost to an expired
// lease cannot overfill the room.
type roomTx struct {
	s     *State
	key   string
	phase *state.Phase
}

func (tx *roomTx) Phase() *state.Phase { return tx.phase }

func (tx *roomTx) Count() (int, error) {
	return tx.s.rooms.Count(tx.s.ctx, tx.s.roomOf(tx.phase.TaskID, tx.phase.ID))
}

func (tx *roomTx) Append(msg state.Message) error { return tx.append(msg, nil) }

func (tx *roomTx) Update(fn func(p *state.Phase)) error {
	p, err := update(tx.s, tx.key, func() error { return noPhase(tx.phase.ID) }, func(p *state.Phase) error { fn(p); return nil })
	if err != nil {
		return err
	}
	tx.phase = p
	return nil
}

func (s *State) MessageCount(taskID, phaseID string) (int, error) {
	if state.CheckID(ids.Task, taskID) != nil || state.CheckID(ids.Phase, phaseID) != nil {
		return 0, nil
	}
	return s.rooms.Count(s.ctx, s.roomOf(taskID, phaseID))
}

func (s *State) Messages(taskID, phaseID string) ([]state.Message, error) {
	if _, err := s.Phase(taskID, phaseID); err != nil {
		return nil, err
	}
	out := []state.Message{}
	err := s.rooms.Read(s.ctx, s.roomOf(taskID, phaseID), func(m room.Message) error {
		var msg state.Message
		if err := json.Unmarshal(m.Data, &msg); err != nil {
			return err
		}
		out = append(out, msg)
		return nil
	})
	return out, err
}

// ReadRoom reads the room's subject from the message after index from
// (natsx/room's Pm-Index: a position is that index, as on every backend)
// up to the last message it holds when the read begins. The count is the
// last message read: when it is the only one after from, it is handed on
// as it is.
func (s *State) ReadRoom(taskID, phaseID string, from int, v *state.MessageView, fn func(raw []byte) error) (int, error) {
	if state.CheckID(ids.Task, taskID) != nil || state.CheckID(ids.Phase, phaseID) != nil {
		return from, nil
	}
	name := s.roomOf(taskID, phaseID)
	last, err := s.rooms.Last(s.ctx, name)
	n := last.Index
	if err != nil || n <= from {
		return from, err
	}
	if n == from+1 {
		// The one new message (a follower's wake-up): the count's read
		// fetched it. No consumer: one made per read landed on any node,
		// and one whose first pull went unanswered delivered nothing
		// until its missing heartbeats reset it (issue 24).
		if v == nil || v.DecodeLine(last.Data) {
			if err := fn(last.Data); err != nil {
				return n, err // as below: the position of the message fn refused
			}
		}
		return n, nil
	}
	pos := from
	err = s.rooms.Follow(s.ctx, name, from, func(m room.Message) error {
		pos = m.Index
		if v == nil || v.DecodeLine(m.Data) {
			if err := fn(m.Data); err != nil {
				return err
			}
		}
		if m.Index >= n {
			return natsx.ErrStop
		}
		return nil
	})
	return pos, err
}

// FollowRoom reads the room again after each change Watch reports (an
// ordered consumer on the room's subject and the phase records: the room
// closing by its record wakes it too).
func (s *State) FollowRoom(ctx context.Context, taskID, phaseID string, from int, until func() (bool, error), fn func(raw []byte) error) (int, error) {
	return state.FollowRoomByWatch(ctx, s, taskID, phaseID, from, until, fn)
}

// LastMessages reads the room from n before its count.
func (s *State) LastMessages(taskID, phaseID string, n int) ([]state.Message, int, error) {
	if state.CheckID(ids.Task, taskID) != nil || state.CheckID(ids.Phase, phaseID) != nil {
		return nil, 0, nil
	}
	count, err := s.rooms.Count(s.ctx, s.roomOf(taskID, phaseID))
	if err != nil {
		return nil, 0, err
	}
	out := []state.Message{}
	_, err = s.ReadRoom(taskID, phaseID, max(count-n, 0), nil, func(raw []byte) error {
		if len(out) == n {
			return nil // appended since the count: not in this tail
		}
		var m state.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	return out, count, err
}

// PhasesProgress is the key progress.TASK: the entries as one JSON list.
func (s *State) PhasesProgress(taskID string) ([]state.PhaseProgress, error) {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return nil, err
	}
	b, _, err := s.get("progress." + taskID)
	if err != nil || b == nil {
		return nil, err
	}
	var out []state.PhaseProgress
	err = json.Unmarshal(b, &out)
	return out, err
}

// AppendPhaseProgress creates the list or adds to it by compare-and-set.
func (s *State) AppendPhaseProgress(taskID string, p state.PhaseProgress) error {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return err
	}
	key := "progress." + taskID
	for {
		ok, err := s.create(key, []state.PhaseProgress{p})
		if err != nil || ok {
			return err
		}
		_, err = update(s, key, func() error { return errGone }, func(list *[]state.PhaseProgress) error {
			if l := *list; len(l) > 0 && l[len(l)-1].Phase == p.Phase {
				return state.ErrUnchanged
			}
			*list = append(*list, p)
			return nil
		})
		if err != errGone {
			return err
		}
	}
}

// errGone is a key removed between its create and its update: create again.
var errGone = errors.New("natsstate: key removed meanwhile")

// Agents.

func noAgent(name string) error {
	return notFound("see 'pm agents' for the agents that exist", "no agent %s", name)
}

func (s *State) Agent(name string) (*state.Agent, error) {
	if err := state.CheckName(name); err != nil {
		return nil, err
	}
	b, _, err := s.get("agent." + name)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, noAgent(name)
	}
	return dec[state.Agent](b)
}

// AgentsChecked names a record that does not decode instead of failing.
func (s *State) AgentsChecked() ([]*state.Agent, []string, error) {
	recs, err := s.list("agent.>")
	if err != nil {
		return nil, nil, err
	}
	out := make([]*state.Agent, 0, len(recs))
	var bad []string
	for key, b := range recs {
		a, err := dec[state.Agent](b)
		if err != nil {
			bad = append(bad, strings.TrimPrefix(key, "agent."))
			continue
		}
		out = append(out, a)
	}
	byCreated(out, func(a *state.Agent) time.Time { return a.CreatedAt }, func(a *state.Agent) string { return a.Name })
	sort.Strings(bad)
	return out, bad, nil
}

func (s *State) Agents() ([]*state.Agent, error) {
	recs, err := s.list("agent.>")
	if err != nil {
		return nil, err
	}
	out := make([]*state.Agent, 0, len(recs))
	for _, b := range recs {
		a, err := dec[state.Agent](b)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	byCreated(out, func(a *state.Agent) time.Time { return a.CreatedAt }, func(a *state.Agent) string { return a.Name })
	return out, nil
}

func (s *State) CreateAgent(a *state.Agent) (bool, error) {
	if err := state.CheckName(a.Name); err != nil {
		return false, err
	}
	return s.create("agent."+a.Name, a)
}

func (s *State) UpdateAgent(name string, fn func(a *state.Agent) error) (*state.Agent, error) {
	if err := state.CheckName(name); err != nil {
		return nil, err
	}
	return update(s, "agent."+name, func() error { return noAgent(name) }, fn)
}

// RemoveAgent deletes the record at the revision fn saw (a compare-and-set,
// like UpdateAgent's), then the mailbox and cursor.
func (s *State) RemoveAgent(name string, fn func(a *state.Agent) error) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	for {
		b, rev, err := s.get("agent." + name)
		if err != nil {
			return err
		}
		var a *state.Agent
		if b != nil {
			if a, err = dec[state.Agent](b); err != nil {
				return err
			}
		}
		if err := fn(a); err != nil {
			return err
		}
		if b != nil {
			_, err = s.write("agent."+name, nil, rev, true)
		}
		if natsx.WrongLast(err) {
			continue // updated meanwhile: fn sees the new record
		}
		if err != nil {
			return err
		}
		if err := s.do(func(op context.Context) error { return s.mail.Purge(op, jetstream.WithPurgeSubject(s.mailP+name)) }); err != nil {
			return err
		}
		if err := s.do(func(op context.Context) error { return s.forgetLogs(op, name) }); err != nil {
			return err // a purge repeated purges what is there: the same
		}
		if _, err := s.write("cursor."+name, nil, anyRev, true); err != nil {
			return err
		}
		return s.dropSeen(name)
	}
}

// Mailboxes: a position is the stream sequence after an entry.

func (s *State) Post(name string, v any) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.publishOnce(s.mailP+name, b)
}

func (s *State) ReadMailbox(name string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return from, err
	}
	return s.readSubject(s.mail, s.mailP+name, from, fn)
}

// MailboxEnd is the position after the subject's last entry.
func (s *State) MailboxEnd(name string) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return 0, err
	}
	return s.subjectEnd(s.mail, s.mailP+name)
}

func (s *State) MailboxCursor(name string) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return 0, err
	}
	b, _, err := s.get("cursor." + name)
	if err != nil || b == nil {
		return 0, err
	}
	var pos int64
	err = json.Unmarshal(b, &pos)
	return pos, err
}

func (s *State) SetMailboxCursor(name string, pos int64) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	_, err := s.write("cursor."+name, fmt.Appendf(nil, "%d", pos), anyRev, false)
	return err
}

// Requests.

func noRequest(id string) error {
	return notFound("see 'pm requests --all' for the requests that exist", "no request %s", id)
}

func (s *State) CreateRequest(r *state.Request) error {
	for {
		r.ID = s.IDs.New(ids.Request)
		ok, err := s.create("req."+r.ID, r)
		if err != nil || ok {
			return err
		}
	}
}

func (s *State) Request(id string) (*state.Request, error) {
	if err := state.CheckID(ids.Request, id); err != nil {
		return nil, err
	}
	b, _, err := s.get("req." + id)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, noRequest(id)
	}
	return dec[state.Request](b)
}

func (s *State) UpdateRequest(id string, fn func(r *state.Request) error) (*state.Request, error) {
	if err := state.CheckID(ids.Request, id); err != nil {
		return nil, err
	}
	return update(s, "req."+id, func() error { return noRequest(id) }, fn)
}

func (s *State) Requests() ([]*state.Request, error) {
	recs, err := s.list("req.>")
	if err != nil {
		return nil, err
	}
	out := []*state.Request{}
	for _, b := range recs {
		r, err := dec[state.Request](b)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	byCreated(out, func(r *state.Request) time.Time { return r.CreatedAt }, func(r *state.Request) string { return r.ID })
	return out, nil
}

// Designs: the key holds the state ("null" until the first write), the log
// is a subject of the design-log stream.

func noDesign(id string) error {
	return notFound("see 'pm designs' for the designs that exist", "no design %s", id)
}

func (s *State) CreateDesign() (string, error) {
	for {
		id := s.IDs.New(ids.Design)
		ok, err := s.create("design."+id, nil)
		if err != nil || ok {
			return id, err
		}
	}
}

func (s *State) WriteDesign(id string, v any) error {
	if err := state.CheckID(ids.Design, id); err != nil {
		return err
	}
	_, err := update(s, "design."+id, func() error { return noDesign(id) }, func(raw *json.RawMessage) error {
		b, err := json.Marshal(v)
		*raw = b
		return err
	})
	return err
}

func (s *State) ReadDesign(id string, v any) error {
	if err := state.CheckID(ids.Design, id); err != nil {
		return err
	}
	b, _, err := s.get("design." + id)
	if err != nil {
		return err
	}
	if b == nil || string(b) == "null" {
		return noDesign(id)
	}
	return json.Unmarshal(b, v)
}

func (s *State) AppendDesignLog(id string, v any) error {
	if err := state.CheckID(ids.Design, id); err != nil {
		return err
	}
	if b, _, err := s.get("design." + id); err != nil || b == nil {
		if err == nil {
			err = noDesign(id)
		}
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.publishOnce(s.dlog+id, b)
}

func (s *State) DesignIDs() ([]string, error) {
	recs, err := s.list("design.>")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(recs))
	for k := range recs {
		out = append(out, strings.TrimPrefix(k, "design."))
	}
	sort.Strings(out)
	return out, nil
}

// design checks that id names a design.
func (s *State) design(id string) error {
	if err := state.CheckID(ids.Design, id); err != nil {
		return err
	}
	b, _, err := s.get("design." + id)
	if err == nil && b == nil {
		err = noDesign(id)
	}
	return err
}

// WriteDesignCopy is the key dcopy.ID (outside design.>, which lists the
// designs): the copy as it stands.
func (s *State) WriteDesignCopy(id, name string, data []byte) error {
	if err := s.design(id); err != nil {
		return err
	}
	_, err := s.write("dcopy."+id, data, anyRev, false)
	return err
}

// TryLockDesign is the lease design.ID, renewed until unlock: a holder
// that dies lets it expire (lockTTL).
func (s *State) TryLockDesign(id string) (func(), bool, error) {
	if err := s.design(id); err != nil {
		return nil, false, err
	}
	// Acquire rides out a change of leader itself, and a take whose
	// answer was lost is recognised as this one (natsx/lease): held by
	// this process, never reported held by another.
	l, err := s.locks.Acquire(s.ctx, "design."+id, s.holder())
	if errors.Is(err, lease.ErrHeld) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	kept := lease.Keep(s.ctx, lockTTL, l.Renew, lease.KeepOptions{})
	var once sync.Once
	return func() {
		once.Do(func() {
			kept.Stop()
			_ = s.release(l)
		})
	}, true, nil
}

// Watch follows the subjects of scope's records, rooms and mailbox with
// ordered consumers (natsx.Conn.Wake) and checks after each change.
func (s *State) Watch(ctx context.Context, scope state.Scope, check func() (bool, error)) error {
	kv := s.kvPrefix
	type source struct {
		stream   string
		subjects []string
	}
	var srcs []source
	switch {
	case scope.Task != "":
		// Its children's records are tasks too: any task wakes it.
		srcs = []source{{"KV_" + s.bucket, []string{kv + "task.>", kv + "phase." + scope.Task + ".>"}},
			{s.roomS, []string{s.roomP + scope.Task + ".>"}}}
	case scope.Agent != "":
		srcs = []source{{"KV_" + s.bucket, []string{kv + "agent." + scope.Agent, kv + "cursor." + scope.Agent}},
			{s.mailS, []string{s.mailP + scope.Agent}}}
		if scope.Replies {
			// Filtered at the subscription: a waiter that did not ask for
			// the reply stream is not woken by each of its pieces.
			srcs = append(srcs, source{s.names.Replies, []string{s.names.ReplyPrefix + scope.Agent}})
		}
	case scope.Requests:
		srcs = []source{{"KV_" + s.bucket, []string{kv + "req.>"}}}
	default:
		return errs.Usagef("", "state.Scope names nothing to watch")
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := make(chan struct{}, 1)
	wakeups := make([]*natsx.Wakeup, len(srcs))
	for i, src := range srcs {
		w, err := s.c.Wake(wctx, src.stream, src.subjects)
		if err != nil {
			return err
		}
		wakeups[i] = w
		go func() {
			for {
				select {
				case <-wctx.Done():
					return
				case <-w.C:
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	stored := make([]uint64, len(srcs)) // per stream, what its leader holds
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
		// check reads from the leaders: they first hold what woke it.
		for i, w := range wakeups {
			if err := w.Err(); err != nil {
				return err // its consumer lost for good: not asleep on it
			}
			if seen := w.Seen(); seen > stored[i] {
				if err := s.c.Stored(ctx, srcs[i].stream, seen); err != nil {
					return err
				}
				stored[i] = seen
			}
		}
	}
}

// Project is the project's name on the hub.
func (s *State) Project() string { return s.names.Project }

// Streams names the JetStream streams that hold the project (the bus's
// too, natsbus), its records' first.
func (s *State) Streams() []string { return s.names.Streams() }

// Bus is the project's bus (natsbus): its events in one order, a cursor
// its place, followed from any machine.
func (s *State) Bus() *natsbus.Bus { return s.bus }

// RecordsStream is the stream of project's records.
func RecordsStream(project string) string { return natsx.KVStream("pm_" + project) }
