// Package state is the seam between pm's domain rules (task, phase, agent,
// inbox, request, ops) and where a project's state is kept: the records
// (records.go), small interfaces grouped by aggregate (state.go: Tasks,
// Phases with their rooms, Agents, Mailboxes, Requests, Designs, Prompts,
// Watcher; agentlogs.go: AgentLogs, an agent's transcript and reply
// stream and the project's cost ledger),
// and the sentinel errors (errors.go). Implementations:
//
//	internal/state/fsstate    .plasmodium/ on disk (the store: files, flock, crash repair)
//	internal/state/memstate   in memory, for unit tests
//	internal/state/natsstate  on NATS JetStream, for a project on a hub
//
// Each runs internal/state/statetest, the one conformance suite, from its own
// test; a new backend is a package that implements State and passes it.
//
// # What every implementation guarantees
//
// Acknowledged. A write is acknowledged when its method (or the RoomTx
// method inside a WithPhase) returns nil. An acknowledged write is seen by
// every read that starts after it, in every process of the project, and is
// not lost when the writing process dies. (fsstate: records are replaced by
// an fsync'd rename, log entries appended by one write(2) under the log's
// lock; a log entry survives a crash of the process, not of the machine.)
// A write that returned an error either happened whole or not at all; a
// reader never sees half a record or half an entry.
//
// Atomicity. UpdateTask, UpdateAgent, UpdateRequest and UpdatePhase are each
// a read-modify-write of one record that no other update of that record
// interleaves with (a lock, or a compare-and-set retried inside the method):
// two concurrent updates both land, in some order. fn may run more than
// once (a retried compare-and-set): it must only change the record it is
// given. fn returning ErrUnchanged writes nothing and the method returns no
// error; fn returning any other error writes nothing and the method returns
// it.
//
// Transactions. WithTasks, WithPhases and WithPhase are critical sections
// held across processes: no two runs of the same section (the project's
// tasks; one task's phases; one phase's room) overlap. They are taken in
// this order only (tasks, phases, room, then single records); fn may call
// any method that does not take a section it is already in. Writes made
// inside are not rolled back when fn fails: each is acknowledged on its
// own. The room's transaction is what keeps a room exact: Count and the
// Append that follows see no other writer, and Append refuses (ErrRoomFull,
// ErrClosed) rather than exceed MessageLimit, so N writers racing for the
// last k places of a room get exactly k acknowledgements, and every
// acknowledged message is read back by Messages, in acknowledgement order.
//
// Derived room state. A room is closed (RoomClosedBy) when its record says
// so, when it holds MessageLimit messages, or when its task is no longer
// active. Phase, Phases and FindPhase return the derived status whatever the
// stored record says, and WithPhase closes a stored record that disagrees
// before fn sees it (the step a crash left undone).
//
// Ordering. Tasks, LiveTasks, CountTasks, Agents and Requests list oldest
// first (CreatedAt);
// Phases oldest first; DesignIDs sorted; a mailbox and a room in append
// order. Ids are fresh: CreateTask, CreatePhase, CreateRequest and
// CreateDesign never reuse an id in the project.
//
// Ids by prefix. IDsWithPrefix lists the task or request ids that start
// with a prefix, sorted, every id Tasks or Requests would list and no
// other; CompleteID (complete.go) resolves a typed prefix through it, so
// a prefix names the same record from every process and machine.
//
// Errors. Every "no such thing" matches ErrNotFound, every malformed id or
// name ErrInvalid, a refused Append ErrClosed or ErrRoomFull, a lost race
// the method could not settle ErrConflict (errors.Is). They also carry
// pm's exit code and a Try line (internal/errs), so a caller may return
// them to the user as they are. Other errors are the backend's own (a full
// disk, a lost connection) and mean the write may not have happened.
//
// Prompts. CreatePrompt keeps a prompt object only when none of that name
// exists (of racing creators exactly one wins, the others get
// ErrConflict), and PromptFiles reads what is kept in name order, each named
// where it is kept. (Added for internal/prompt and create_capability, which
// read and wrote .plasmodium/prompts/ by path.)
//
// Seen marks. Seen and MarkSeen (how many of a room's messages an agent
// has been shown) are best effort and only move forward; RemoveAgent
// drops them. (Added for internal/phase's chat reads and waits.)
//
// Positions. A room is read by position (ReadRoom, FollowRoom): a
// message's index in the room, 0 the first, the same number on every
// backend (a seen mark is one). A read from position p hands on exactly
// the messages Messages lists from index p on, in that order; a follower
// hands each on once, those appended while it follows too, and, once its
// until reports true, reads once more before it ends (so the message that
// closed a room by its limit is never missed). A mailbox's positions are
// the backend's own (a byte offset, an index, a stream sequence): opaque,
// increasing, 0 its start, MailboxEnd the one after its last entry.
//
// Agent logs (agentlogs.go). A transcript and a reply stream are an
// agent's append-only logs of JSON entries, with positions as a mailbox's
// (opaque, increasing, 0 the start; TranscriptEnd and RepliesEnd the one
// after the last): every appended entry is read back whole, in append
// order, however many writers append at once; an entry over its bound
// (EntryLimit of config limits.log_entry_bytes, at most MaxEntry) is kept
// cut with a mark saying so (FitEntry, the same on every backend), or
// refused (ErrInvalid) when nothing in it can be cut, so a reader never
// holds more than MaxEntry for one;
// LastTranscript holds only the n entries it returns. Each is kept to a
// total (LogBounds, config limits.transcript_bytes and limits.reply_bytes,
// logbound.go): checked after each append, and once over, its oldest
// entries are dropped down to LowWater of it, cut only before a turn's
// start (a user message; a reply's first piece), else a step's (an
// assistant message), else a reply's later piece, never before a tool
// result; a log no such cut brings under its bound is kept over it and
// planned again only at PlanAgainAt; a read from position 0
// then hands on the mark of what was dropped first (MarkEntry; a transcript's
// is told from its messages by IsTranscriptMark: a running llm loop, which
// reads the cut transcript back, leaves it out of its count), and a read
// from any other position hands on every kept entry after it, as it
// would have before the cut. RemoveAgent removes both. A Watch of the agent wakes on each piece of its reply stream (a
// caller follows it, never polling). The cost ledger is the project's,
// appended whole by concurrent writers and never removed (ResetHeld keeps
// it); RecordCost, PricedCosts and Spent derive the priced entries and the
// budgets' sums from it.
//
// Reset. ResetHeld, inside WithTasks, leaves a project that reads as new
// (no task, phase, room, progress or request) and keeps its prompts and
// designs; agents are the caller's to remove first.
//
// Designs. TryLockDesign has one holder at a time, across processes; the
// lock goes with a holder that dies. WriteDesignCopy replaces the copy
// whole.
//
// Caches. A backend may keep caches beside its records (fsstate's count
// marks and indexes) as long as every read answers as the records do; it
// then implements CacheChecker, its own report of a cache that disagrees
// (pm doctor --check), and the records are the truth its repairs restore.
//
// Watching. Watch never polls in a loop of sleeps and never misses a change
// acknowledged after it was called; it may wake with nothing changed.
// WatchAny is Watch over several scopes, with the same guarantees.
//
// Summaries. LiveTasks, CountTasks and MessageCount answer what Tasks and
// Messages would, for less (fsstate keeps a task index and a count mark
// per room); a backend without such caches derives them (Count).
//
// # Invariants of this package
//
// state holds no state of its own and opens no file; its functions (Count,
// ActivePhase, AgentsOf, RoomClosedBy) derive from records they are given, and
// FollowRoomByWatch, WatchAny, RecordCost, PricedCosts and Spent are built
// on the interfaces alone. It imports the store
// only for the record types, aliased while their fast codecs live there
// (records.go); the interfaces do not change when they move here.
package state
