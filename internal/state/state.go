package state

import (
	"context"
	"encoding/json"
)

// State is everything pm keeps about a project's work: one value per
// project, shared by every process of it. doc.go states what each method
// guarantees; statetest checks it for every implementation.
type State interface {
	Tasks
	Phases
	Agents
	Mailboxes
	Requests
	Designs
	Prompts
	Watcher
	AgentLogs // transcripts, reply streams, the cost ledger (agentlogs.go)
	// IDsWithPrefix lists the ids of kind (ids.Task or ids.Request) that
	// start with prefix, sorted, reading no record where the backend can
	// (the files list a directory, a hub its keys): a typed prefix names
	// its task or request on every machine (CompleteID), and the shell
	// completes ids from it. Unknown kinds have none.
	IDsWithPrefix(kind, prefix string) ([]string, error)
}

// Tasks are the task records and the one project-wide critical section.
type Tasks interface {
	// Task reads one task: ErrNotFound when there is none, ErrInvalid when
	// id is not a task id.
	Task(id string) (*Task, error)
	// Tasks reads every task, oldest first (CreatedAt).
	Tasks() ([]*Task, error)
	// LiveTasks reads the live tasks (active or blocked), oldest first: at
	// most what Tasks costs, and less when most tasks are finished (fsstate
	// reads them through its task index).
	LiveTasks() ([]*Task, error)
	// CountTasks is the live tasks (every task with all), oldest first, and
	// how many tasks there are of each status: pm status's summary. Without
	// all a backend may count the finished tasks without reading them.
	CountTasks(all bool) (tasks []*Task, counts map[TaskStatus]int, err error)
	// WithTasks runs fn as the project's one critical section: no other
	// WithTasks runs meanwhile, in any process. Creating and linking
	// tasks, pm done's checks and mark, killing a tree and resetting run in
	// it, so none sees another half done.
	WithTasks(fn func() error) error
	// CreateTask records a new task; the caller is inside WithTasks. build
	// gets a fresh id and returns the record and its context text (nil for
	// none); the record is visible (Task, Tasks) only once the parent's
	// Children and each blocker's Blocks name it. An error from build
	// records nothing.
	CreateTask(build func(id string) (t *Task, context []byte, err error)) (*Task, error)
	// UpdateTask applies fn to the task as stored and writes the result, as
	// one compare-and-set: concurrent updates of a task are serialised and
	// none is lost. fn returning ErrUnchanged writes nothing and is no
	// error (fn should then leave the record as it found it: the record
	// returned is fn's); any other error writes nothing and is returned.
	UpdateTask(id string, fn func(t *Task) error) (*Task, error)
	// Context is the text a subtask was created with (nil when none).
	Context(taskID string) ([]byte, error)
	// ResetHeld removes every task, with its context, phases, rooms and
	// phase progress, and every request: pm reset's wipe. The caller is
	// inside WithTasks and has removed the agents first (RemoveAgent);
	// prompts and designs are kept. Afterwards the project reads as new
	// (no task, no request) and takes new tasks.
	ResetHeld() error
}

// Phases are a task's phases and their rooms (the message logs).
type Phases interface {
	// Phase reads one phase of a task, its Status derived (RoomClosedBy): a
	// full room or a room whose task is no longer active reads closed.
	// ErrNotFound when the task or the phase is unknown.
	Phase(taskID, phaseID string) (*Phase, error)
	// Phases reads a task's phases, oldest first, each derived as by Phase;
	// an unknown task has none.
	Phases(taskID string) ([]*Phase, error)
	// FindPhase is Phase by the phase id alone.
	FindPhase(phaseID string) (*Phase, error)
	// CreatePhase opens a phase: build sees the task and its phases as they
	// are in the task's phase critical section (no other CreatePhase or
	// WithPhases of that task runs meanwhile), with a fresh phase id, and
	// returns the record to write (an empty room is made with it); then,
	// when not nil, runs in the same critical section once the record is
	// written. An error from build writes nothing.
	CreatePhase(taskID string, build func(t *Task, existing []*Phase, id string) (*Phase, error), then func(ph *Phase) error) (*Phase, error)
	// WithPhases runs fn in the task's phase critical section (see
	// CreatePhase): no phase of the task can be opened meanwhile.
	WithPhases(taskID string, fn func() error) error
	// UpdatePhase rewrites the phase record with fn applied, for fields no
	// room transaction reads (its role agents).
	UpdatePhase(taskID, phaseID string, fn func(p *Phase)) (*Phase, error)
	// WithPhase runs fn as the room's transaction (see RoomTx): no other
	// WithPhase of that phase runs meanwhile, in any process. Before fn
	// runs, a record whose room is closed (RoomClosedBy) is closed.
	WithPhase(taskID, phaseID string, fn func(tx RoomTx) error) error
	// Messages reads a room's messages in the order they were accepted.
	Messages(taskID, phaseID string) ([]Message, error)
	// MessageCount is how many messages a room holds, without reading them
	// (0 for a phase that does not exist): what a status shows per room.
	MessageCount(taskID, phaseID string) (int, error)
	// Seen is how many of phaseID's messages agent has been shown: 0 when
	// none is recorded, or the mark cannot be read.
	Seen(agent, phaseID string) int
	// MarkSeen records that agent has been shown phaseID's first n
	// messages. A mark never moves back; it is best effort (a lost mark
	// shows a message twice, never hides one). RemoveAgent drops the
	// agent's marks.
	MarkSeen(agent, phaseID string, n int)
	// ReadRoom calls fn with each message of the room from position from
	// on, in order: a position is a message's index in the room (0 the
	// first), the same on every backend (what Seen counts). raw is the
	// message as JSON (fsstate: the line as written), decoded into v
	// first when v is not nil (a MessageView: nothing allocated for the
	// messages pm writes); raw and v are valid only until fn returns. It
	// returns the position after the last message read (from when none).
	// An unknown room, or a malformed id, holds none; the first error fn
	// returns stops it and is returned.
	ReadRoom(taskID, phaseID string, from int, v *MessageView, fn func(raw []byte) error) (next int, err error)
	// FollowRoom is ReadRoom that then waits for the messages appended
	// later (never by a loop of sleeps): each time it has caught up it
	// asks until, and when until reports true it reads once more (what
	// was appended before it turned true is still handed on) and ends.
	// It also ends when fn or until fails (that error) or ctx ends (ctx's
	// error). raw is fn's to keep.
	FollowRoom(ctx context.Context, taskID, phaseID string, from int, until func() (bool, error), fn func(raw []byte) error) (next int, err error)
	// LastMessages is the room's last n messages, oldest first (as
	// Messages ends), and how many it holds (MessageCount): a room's tail
	// for a status, at a cost that follows n (fsstate reads the log
	// backwards). An unknown room holds none.
	LastMessages(taskID, phaseID string, n int) (msgs []Message, count int, err error)
	// PhasesProgress is the task's phase progress entries (the loop
	// breaker's record of the phases agents opened), oldest first; none
	// for a task without.
	PhasesProgress(taskID string) ([]PhaseProgress, error)
	// AppendPhaseProgress records p after the task's entries, unless the
	// last one is p's phase already (the same pm phase run again after a
	// kill found its room).
	AppendPhaseProgress(taskID string, p PhaseProgress) error
}

// RoomTx is one transaction on a room, valid only inside WithPhase's fn.
type RoomTx interface {
	// Phase is the record as it stands in this transaction.
	Phase() *Phase
	// Count is how many messages the room holds.
	Count() (int, error)
	// Append adds m as the room's next message. It refuses with ErrClosed
	// when the record is closed and ErrRoomFull when the room holds
	// MessageLimit messages, writing nothing: so a room accepts exactly
	// MessageLimit messages however many writers race.
	Append(m Message) error
	// Update rewrites the phase record with fn applied (a close, an
	// extension); Phase returns the result.
	Update(fn func(p *Phase)) error
}

// Agents are the agent records.
type Agents interface {
	// Agent reads one agent: ErrNotFound, or ErrInvalid for a malformed name.
	Agent(name string) (*Agent, error)
	// Agents reads every agent record, oldest first (CreatedAt).
	Agents() ([]*Agent, error)
	// AgentsChecked is Agents that also names, sorted, the agents whose
	// record is there but cannot be read (torn, corrupt) instead of failing
	// on them: the supervisor stays on for those and reports them. A backend
	// whose records cannot tear names none unless one does not decode.
	AgentsChecked() (agents []*Agent, unreadable []string, err error)
	// CreateAgent writes a unless a record of that name exists: of two
	// creators racing, exactly one gets created true, and both then read
	// the same record.
	CreateAgent(a *Agent) (created bool, err error)
	// UpdateAgent is UpdateTask for an agent record.
	UpdateAgent(name string, fn func(a *Agent) error) (*Agent, error)
	// RemoveAgent runs fn on the record as it stands (nil when there is
	// none or it cannot be read) and, unless fn fails, removes the agent
	// with everything it owns (mailbox, cursor), in the same critical
	// section as UpdateAgent's: an update either lands before (and fn sees
	// it) or finds no agent (ErrNotFound).
	RemoveAgent(name string, fn func(a *Agent) error) error
}

// Mailboxes are the agents' inboxes: append-only logs of JSON values with
// a saved cursor each. Positions are opaque, increasing along a mailbox, 0
// its start.
type Mailboxes interface {
	// Post appends v to name's mailbox as one entry.
	Post(name string, v any) error
	// ReadMailbox calls fn with each whole entry at or after position from,
	// in order, and next, the position after it; it returns the position
	// after the last entry read (from when none). A torn or malformed
	// entry is skipped. A missing mailbox is empty.
	ReadMailbox(name string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error)
	// MailboxCursor is name's saved position (0 when none was saved).
	MailboxCursor(name string) (int64, error)
	// SetMailboxCursor saves name's position.
	SetMailboxCursor(name string, pos int64) error
	// MailboxEnd is the position after name's last entry (0 for an empty
	// mailbox): where a reader of what arrives from now on starts, and,
	// past the saved cursor, an entry not yet finished with.
	MailboxEnd(name string) (int64, error)
}

// Requests are the agents' questions to the human.
type Requests interface {
	// CreateRequest stores r under a fresh id and sets r.ID.
	CreateRequest(r *Request) error
	// Request reads one request: ErrNotFound, or ErrInvalid for a bad id.
	Request(id string) (*Request, error)
	// UpdateRequest is UpdateTask for a request.
	UpdateRequest(id string, fn func(r *Request) error) (*Request, error)
	// Requests reads every request, oldest first.
	Requests() ([]*Request, error)
}

// Designs are code designs (pm design): a JSON state and a log each.
type Designs interface {
	// CreateDesign makes a new, empty design and returns its id.
	CreateDesign() (string, error)
	// WriteDesign replaces design id's state with v (as JSON).
	WriteDesign(id string, v any) error
	// ReadDesign decodes design id's state into v: ErrNotFound when the
	// design has none.
	ReadDesign(id string, v any) error
	// AppendDesignLog appends v to design id's log.
	AppendDesignLog(id string, v any) error
	// DesignIDs lists the designs, sorted.
	DesignIDs() ([]string, error)
	// WriteDesignCopy keeps data as the working copy of design id's file
	// (name is the file's path in the project; only its base name is
	// kept), replacing the last one whole.
	WriteDesignCopy(id, name string, data []byte) error
	// TryLockDesign takes design id's run lock, held while a process runs
	// the design, so two processes never run one: ok false (no error)
	// when another holds it. unlock releases it; a holder that dies
	// releases it too (fsstate: the flock goes with the process; a hub's
	// lease expires).
	TryLockDesign(id string) (unlock func(), ok bool, err error)
}

// Prompts are the project's own prompt objects (create_capability writes
// them) and the overrides people keep beside them: markdown files the
// loader (internal/prompt) parses, layered over the built-ins.
type Prompts interface {
	// PromptFiles calls fn with each NAME.md kept under sub ("" the prompt
	// objects, "tools" tool docs, "angles" the code designer's angles), in
	// name order, each named where it is kept (what an error about it
	// shows); none when there are none. The first error fn returns stops it.
	PromptFiles(sub string, fn func(where string, data []byte) error) error
	// CreatePrompt keeps data as prompt object name unless one of that name
	// exists (ErrConflict, nothing written): of two creators racing, one
	// wins. It returns where the object is kept. ErrInvalid for a bad name.
	CreatePrompt(name string, data []byte) (where string, err error)
	// RemovePrompt removes prompt object name (ErrNotFound when none).
	RemovePrompt(name string) error
}

// Watcher wakes waiters on changes instead of a sleep loop.
type Watcher interface {
	// Watch calls check, then again after each change to what scope
	// covers, until check reports true (nil), check fails (its error) or
	// ctx ends (ctx's error). No change is lost: a change acknowledged
	// after Watch was called is followed by a call of check. A check may
	// also run with no change (a spurious wake-up).
	Watch(ctx context.Context, scope Scope, check func() (bool, error)) error
}

// Scope is what a Watch covers. Exactly one field is set.
type Scope struct {
	// Task covers the task's record, its phases (those opened after the
	// watch began too) and their rooms, and its children's records.
	Task string
	// Agent covers the agent's record and its mailbox.
	Agent string
	// Replies, with Agent, covers the agent's reply stream too (the pieces
	// of a resident's streamed reply): only a caller waiting on the reply
	// asks for it, so a waiter on the mailbox (the resident's own Serve)
	// is not woken by every piece the resident streams. A backend may
	// wake a watch without it on them too (spurious wake-ups are allowed).
	Replies bool
	// Requests covers every request.
	Requests bool
}

// CacheChecker is a backend that keeps caches beside its records (fsstate:
// a count mark per room, the task and phase indexes). CheckCaches reports
// each place a cache disagrees with the records, changing nothing: pm
// doctor --check's look at what a crash left in them. A backend without
// caches has nothing to report and does not implement it.
type CacheChecker interface {
	CheckCaches() ([]CacheFinding, error)
}

// CacheFinding is one disagreement CheckCaches found.
type CacheFinding struct {
	Kind    CacheKind
	Subject string // the phase (CacheCount), "index" (CacheIndex)
	Text    string
}

// CacheKind is which cache a finding is about.
type CacheKind string

const (
	CacheCount CacheKind = "count" // a room's count mark disagrees with its log
	CacheIndex CacheKind = "index" // the task or phase index disagrees with the records
)
