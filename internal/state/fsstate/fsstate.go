package fsstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
)

// FS is a state directory behind the state interfaces.
type FS struct {
	s *store.Store

	planMu    sync.Mutex
	planAgain map[string]int64 // a log's path: the size a cut is planned again at (logbound.go)
}

var _ state.State = (*FS)(nil)

// New puts an open store behind the state interfaces.
func New(s *store.Store) *FS { return &FS{s: s} }

// marked makes the store's errors match the state sentinels: its exit
// codes already say which one each is (a missing record is exit 4, a
// malformed id exit 2).
func marked(err error) error {
	switch {
	case err == nil:
		return nil
	case errs.Is(err, errs.NotFound):
		return state.Mark(err, state.ErrNotFound)
	case errs.Is(err, errs.Usage):
		return state.Mark(err, state.ErrInvalid)
	}
	return err
}

// Tasks.

func (f *FS) Task(id string) (*state.Task, error) { t, err := f.s.Task(id); return t, marked(err) }
func (f *FS) Tasks() ([]*state.Task, error)       { return f.s.Tasks() }
func (f *FS) LiveTasks() ([]*state.Task, error)   { return f.s.LiveTasks() }

// WithTasks keeps the task index whole for the section: a rebuild when a
// crash left it incomplete, and a live marker of a task whose creation
// never finished dropped (what LiveTasks inside the section would have
// missed repairing, as only the section's holder may).
func (f *FS) WithTasks(fn func() error) error {
	return f.s.WithTasksLock(func() error {
		if err := f.s.RepairTaskIndexHeld(); err != nil {
			return err
		}
		return fn()
	})
}

// CountTasks reads the live tasks and counts the finished ones from the
// task index, so pm status does not grow with finished tasks; with all,
// or with an index a crash left incomplete, it reads every task and
// repairs the index when the two disagree.
func (f *FS) CountTasks(all bool) ([]*state.Task, map[state.TaskStatus]int, error) {
	live, counts, ok, err := f.s.TaskCounts()
	if err != nil {
		return nil, nil, err
	}
	if ok && !all {
		return append([]*state.Task{}, live...), counts, nil
	}
	tasks, err := f.s.Tasks()
	if err != nil {
		return nil, nil, err
	}
	out, scanned := state.Count(tasks, all)
	if !ok || !indexedCountsAgree(counts, scanned) {
		if err := f.s.RepairTaskIndex(); err != nil {
			return nil, nil, err
		}
	}
	return out, scanned, nil
}

// indexedCountsAgree compares the index's counts with a full scan's, on
// the statuses the index keeps.
func indexedCountsAgree(index, scan map[state.TaskStatus]int) bool {
	for _, st := range []state.TaskStatus{state.TaskActive, state.TaskBlocked, state.TaskDone, state.TaskKilled} {
		if index[st] != scan[st] {
			return false
		}
	}
	return true
}

func (f *FS) CreateTask(build func(id string) (*state.Task, []byte, error)) (*state.Task, error) {
	t, err := f.s.CreateTask(build)
	return t, marked(err)
}

func (f *FS) UpdateTask(id string, fn func(t *state.Task) error) (*state.Task, error) {
	t, err := f.s.UpdateTask(id, fn)
	return t, marked(err)
}

func (f *FS) Context(taskID string) ([]byte, error) {
	if _, err := f.Task(taskID); err != nil {
		return nil, err
	}
	b, err := f.s.ReadContext(taskID)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// ResetHeld is the store's wipe (store.ResetStateHeld): tasks/,
// requests/ and the agents' process logs (logs/) emptied, the task index
// made again, empty and complete, last.
func (f *FS) ResetHeld() error { return f.s.ResetStateHeld() }

// IDsWithPrefix lists the task or request directory's names (no record is
// read).
func (f *FS) IDsWithPrefix(kind, prefix string) ([]string, error) {
	return f.s.IDsWithPrefix(kind, prefix), nil
}

// Phases.

func (f *FS) Phase(taskID, phaseID string) (*state.Phase, error) {
	p, err := f.s.Phase(taskID, phaseID)
	return p, marked(err)
}

func (f *FS) Phases(taskID string) ([]*state.Phase, error) {
	ps, err := f.s.Phases(taskID)
	return ps, marked(err)
}

func (f *FS) FindPhase(phaseID string) (*state.Phase, error) {
	p, err := f.s.FindPhase(phaseID)
	return p, marked(err)
}

func (f *FS) CreatePhase(taskID string, build func(t *state.Task, existing []*state.Phase, id string) (*state.Phase, error), then func(ph *state.Phase) error) (*state.Phase, error) {
	p, err := f.s.CreatePhaseThen(taskID, build, then)
	return p, marked(err)
}

func (f *FS) WithPhases(taskID string, fn func() error) error {
	return marked(f.s.WithPhasesLock(taskID, fn))
}

func (f *FS) UpdatePhase(taskID, phaseID string, fn func(p *state.Phase)) (*state.Phase, error) {
	p, err := f.s.UpdatePhase(taskID, phaseID, fn)
	return p, marked(err)
}

func (f *FS) WithPhase(taskID, phaseID string, fn func(tx state.RoomTx) error) error {
	return marked(f.s.WithPhase(taskID, phaseID, func(tx *store.PhaseTx) error { return fn(roomTx{tx}) }))
}

func (f *FS) Messages(taskID, phaseID string) ([]state.Message, error) {
	if _, err := f.Phase(taskID, phaseID); err != nil {
		return nil, err
	}
	return f.s.Messages(taskID, phaseID)
}

// MessageCount counts the room's lines (through its count mark).
func (f *FS) MessageCount(taskID, phaseID string) (int, error) {
	if state.CheckID(ids.Task, taskID) != nil || state.CheckID(ids.Phase, phaseID) != nil {
		return 0, nil
	}
	return f.s.MessageCount(taskID, phaseID)
}

// Seen and MarkSeen are agents/NAME/seen.json, the store's; a malformed
// name (it becomes a path) has no marks.
func (f *FS) Seen(agent, phaseID string) int {
	if state.CheckName(agent) != nil {
		return 0
	}
	return f.s.Seen(agent, phaseID)
}

func (f *FS) MarkSeen(agent, phaseID string, n int) {
	if state.CheckName(agent) == nil {
		f.s.MarkSeen(agent, phaseID, n)
	}
}

// validRoom reports that both ids are well formed: they become paths.
func validRoom(taskID, phaseID string) bool {
	return state.CheckID(ids.Task, taskID) == nil && state.CheckID(ids.Phase, phaseID) == nil
}

// ReadRoom reads the room's log in place (store.ReadMessageViews: each
// line decoded into v, or only checked to be JSON), the lines before from
// counted and passed over: a position is a message's index, not a byte
// offset, so it means what it means on every backend.
func (f *FS) ReadRoom(taskID, phaseID string, from int, v *state.MessageView, fn func(raw []byte) error) (int, error) {
	if !validRoom(taskID, phaseID) {
		return from, nil
	}
	i := 0
	err := f.s.ReadMessageViews(taskID, phaseID, v, func(raw []byte) error {
		if i++; i <= from {
			return nil
		}
		return fn(raw)
	})
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return max(i, from), err
}

// FollowRoom follows the room's log with the file bus's follower
// (bus.Follower: inotify on the phase's directory through internal/watch,
// the reader's place a byte offset kept across wake-ups), so a wake-up
// reads only what was appended.
func (f *FS) FollowRoom(ctx context.Context, taskID, phaseID string, from int, until func() (bool, error), fn func(raw []byte) error) (int, error) {
	if !validRoom(taskID, phaseID) {
		return from, state.Errorf(state.ErrInvalid, "ids look like tk-a1b2c3 and ph-a1b2c3", "no room %s/%s", taskID, phaseID)
	}
	i := 0
	for l, err := range f.s.FollowMessages(taskID, phaseID, until).Lines(ctx, bus.Cursor{}) {
		if err != nil {
			return max(i, from), err
		}
		if i++; i <= from {
			continue
		}
		if err := fn(l.Raw); err != nil {
			return i, err
		}
	}
	return max(i, from), nil
}

// LastMessages reads the log backwards from its end, the count through
// its mark (store.LastMessages).
func (f *FS) LastMessages(taskID, phaseID string, n int) ([]state.Message, int, error) {
	if !validRoom(taskID, phaseID) {
		return nil, 0, nil
	}
	return f.s.LastMessages(taskID, phaseID, n)
}

// PhasesProgress and AppendPhaseProgress are tasks/ID/progress.jsonl.
func (f *FS) PhasesProgress(taskID string) ([]state.PhaseProgress, error) {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return nil, err
	}
	return f.s.PhasesProgress(taskID)
}

func (f *FS) AppendPhaseProgress(taskID string, p state.PhaseProgress) error {
	if err := state.CheckID(ids.Task, taskID); err != nil {
		return err
	}
	return f.s.AppendPhaseProgress(taskID, p)
}

// roomTx is the store's phase transaction with the limit kept by Append
// itself, not only by its callers.
type roomTx struct{ tx *store.PhaseTx }

func (r roomTx) Phase() *state.Phase                  { return r.tx.Phase }
func (r roomTx) Count() (int, error)                  { return r.tx.Count() }
func (r roomTx) Update(fn func(p *state.Phase)) error { return r.tx.Update(fn) }

func (r roomTx) Append(m state.Message) error {
	ph := r.tx.Phase
	if ph.Status != state.PhaseActive {
		return state.Errorf(state.ErrClosed, "the owner may open a new phase", "phase %s is closed (%s)", ph.ID, ph.CloseReason)
	}
	n, err := r.tx.Count()
	if err != nil {
		return err
	}
	if n >= ph.MessageLimit {
		return state.Errorf(state.ErrRoomFull, "the owner may open a new phase", "phase %s holds its %d messages", ph.ID, ph.MessageLimit)
	}
	return r.tx.Append(m)
}

// Agents.

func (f *FS) Agent(name string) (*state.Agent, error) {
	a, err := f.s.Agent(name)
	return a, marked(err)
}
func (f *FS) Agents() ([]*state.Agent, error) { return f.s.Agents() }

func (f *FS) AgentsChecked() ([]*state.Agent, []string, error) { return f.s.AgentsChecked() }

func (f *FS) CreateAgent(a *state.Agent) (bool, error) { return f.s.CreateAgent(a) }

func (f *FS) UpdateAgent(name string, fn func(a *state.Agent) error) (*state.Agent, error) {
	a, err := f.s.UpdateAgent(name, fn)
	return a, marked(err)
}

func (f *FS) RemoveAgent(name string, fn func(a *state.Agent) error) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	if !f.s.AgentDirExists(name) {
		return fn(nil) // no agent: its lock's directory is not made for it
	}
	return marked(f.s.RemoveAgent(name, fn))
}

// Mailboxes: an agent's inbox.jsonl, positions its byte offsets (what
// inbox.cursor has always held).

// Every mailbox method checks the name first: it becomes a path.

func (f *FS) Post(name string, v any) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	return f.s.AppendInbox(name, v)
}

func (f *FS) ReadMailbox(name string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return from, err
	}
	r := f.s.InboxFrom(name, from)
	err := r.Next(func(raw []byte) error { return fn(raw, r.Offset) })
	return r.Offset, err
}

func (f *FS) MailboxCursor(name string) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return 0, err
	}
	return f.s.InboxCursor(name), nil
}

func (f *FS) SetMailboxCursor(name string, pos int64) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	if err := f.s.EnsureAgentDir(name); err != nil {
		return err
	}
	return f.s.SetInboxCursor(name, pos)
}

// MailboxEnd is the inbox's size: positions are byte offsets.
func (f *FS) MailboxEnd(name string) (int64, error) {
	if err := state.CheckName(name); err != nil {
		return 0, err
	}
	return f.s.InboxTail(name).Offset, nil
}

// Requests.

func (f *FS) CreateRequest(r *state.Request) error { return f.s.CreateRequest(r) }

func (f *FS) Request(id string) (*state.Request, error) {
	r, err := f.s.Request(id)
	return r, marked(err)
}

func (f *FS) UpdateRequest(id string, fn func(r *state.Request) error) (*state.Request, error) {
	r, err := f.s.UpdateRequest(id, fn)
	return r, marked(err)
}

func (f *FS) Requests() ([]*state.Request, error) { return f.s.Requests() }

// Designs.

func (f *FS) CreateDesign() (string, error)          { return f.s.CreateDesign() }
func (f *FS) WriteDesign(id string, v any) error     { return f.s.WriteDesign(id, v) }
func (f *FS) ReadDesign(id string, v any) error      { return marked(f.s.ReadDesign(id, v)) }
func (f *FS) AppendDesignLog(id string, v any) error { return f.s.AppendDesignLog(id, v) }
func (f *FS) DesignIDs() ([]string, error)           { return f.s.DesignIDs() }

// design checks that id names a design (its directory): the copy and
// the lock live in it.
func (f *FS) design(id string) error {
	if err := state.CheckID(ids.Design, id); err != nil {
		return err
	}
	all, err := f.s.DesignIDs()
	if err != nil {
		return err
	}
	if !slices.Contains(all, id) {
		return state.Errorf(state.ErrNotFound, "see 'pm designs' for the designs that exist", "no design %s", id)
	}
	return nil
}

// WriteDesignCopy is designs/ID/work/NAME, replaced by an fsync'd rename.
func (f *FS) WriteDesignCopy(id, name string, data []byte) error {
	if err := f.design(id); err != nil {
		return err
	}
	return f.s.WriteDesignCopy(id, name, data)
}

// TryLockDesign is an flock of designs/ID/run: the kernel drops it with
// the process that held it.
func (f *FS) TryLockDesign(id string) (func(), bool, error) {
	if err := f.design(id); err != nil {
		return nil, false, err
	}
	return f.s.TryLockDesign(id)
}

// Prompts: prompts/SUB/NAME.md, named by their paths.

func (f *FS) PromptFiles(sub string, fn func(where string, data []byte) error) error {
	if sub != "" {
		if err := state.CheckName(sub); err != nil {
			return err
		}
	}
	return store.MarkdownFiles(filepath.Join(f.s.PromptsDir(), sub), fn)
}

func (f *FS) CreatePrompt(name string, data []byte) (string, error) {
	if err := state.CheckName(name); err != nil {
		return "", err
	}
	err := f.s.CreatePrompt(name, data)
	if errors.Is(err, os.ErrExist) {
		return "", state.Errorf(state.ErrConflict, "pick another name", "a prompt object %q exists", name)
	}
	return f.s.PromptPath(name), err
}

func (f *FS) RemovePrompt(name string) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	err := f.s.RemovePrompt(name)
	if errors.Is(err, os.ErrNotExist) {
		return state.Errorf(state.ErrNotFound, "see 'pm prompts'", "no prompt object %q", name)
	}
	return err
}

// taskDirs are the directories a Scope{Task} watch covers, listed again
// after each wake-up so phases opened meanwhile are covered: the task's
// (task.json), its phases directory (a phase opened), each phase's
// (phase.json, messages.jsonl) and each child's (task.json).
func (f *FS) taskDirs(taskID string) []string {
	out := []string{f.s.TaskDir(taskID), f.s.PhasesDir(taskID)}
	if ents, err := os.ReadDir(f.s.PhasesDir(taskID)); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, f.s.PhaseDir(taskID, e.Name()))
			}
		}
	}
	if t, err := f.s.Task(taskID); err == nil {
		for _, c := range t.Children {
			out = append(out, f.s.TaskDir(c))
		}
	}
	return out
}

// Watch wakes on inotify events in the directories that hold what scope
// covers (internal/watch), never a sleep loop.
func (f *FS) Watch(ctx context.Context, scope state.Scope, check func() (bool, error)) error {
	switch {
	case scope.Task != "":
		if err := state.CheckID(ids.Task, scope.Task); err != nil {
			return err
		}
		// A task not (or no longer) there is watched all the same: its
		// directories are watched once they appear, and check decides.
		return watch.Until(ctx, func() []string { return f.taskDirs(scope.Task) }, check)
	case scope.Agent != "":
		if err := state.CheckName(scope.Agent); err != nil {
			return err
		}
		// The directory is made first so its files can be watched before
		// anything is written there.
		if err := f.s.EnsureAgentDir(scope.Agent); err != nil {
			return err
		}
		dir := f.s.AgentDir(scope.Agent)
		return watch.Until(ctx, func() []string { return []string{dir} }, check)
	case scope.Requests:
		dir := f.s.RequestsDir()
		return watch.Until(ctx, func() []string { return []string{dir} }, check)
	}
	return errs.Usagef("", "state.Scope names nothing to watch")
}

var _ state.CacheChecker = (*FS)(nil)

// CheckCaches compares each room's count mark with its log, and the task
// and phase indexes with the records (store.CheckCount, CheckTaskIndex,
// CheckPhaseIndex). A log that cannot be read is left to MessageCount's
// caller, which reads it too.
func (f *FS) CheckCaches() ([]state.CacheFinding, error) {
	var out []state.CacheFinding
	tasks, err := f.s.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		phases, err := f.s.Phases(t.ID)
		if err != nil {
			return nil, err
		}
		for _, ph := range phases {
			viaMark, whole, err := f.s.CheckCount(t.ID, ph.ID)
			if err == nil && viaMark != whole {
				out = append(out, state.CacheFinding{Kind: state.CacheCount, Subject: ph.ID,
					Text: fmt.Sprintf("the count mark makes %d messages, the log holds %d", viaMark, whole)})
			}
		}
	}
	for _, check := range []func() ([]string, error){f.s.CheckTaskIndex, f.s.CheckPhaseIndex} {
		found, err := check()
		if err != nil {
			return nil, err
		}
		for _, text := range found {
			out = append(out, state.CacheFinding{Kind: state.CacheIndex, Subject: "index", Text: text})
		}
	}
	return out, nil
}
