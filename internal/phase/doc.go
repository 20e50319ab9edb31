// Package phase implements discussion phases: bounded rooms of at most
// message_limit messages.
//
// Invariants:
//   - at most one active phase per task (creation is serialised by the task's
//     phases lock and checks the others);
//   - a phase holds exactly message_limit messages when it closes by limit:
//     Say locks messages.jsonl, re-reads phase.json, counts, appends and, on
//     the last message, closes — one critical section, so racing writers beyond
//     the limit get a "closed" error (exit 5) and change nothing;
//   - a room's state is derived (store.RoomClosedBy): it is closed when its
//     log holds message_limit messages or its task is no longer active,
//     whatever phase.json says; the store's phase reads return it so and
//     WithPhase derives again under the lock, writing the close a crash left
//     undone, so say, extend, end-phase and every reader agree;
//   - a message is a valid line with an id, for the count and for every
//     reader (Read, ReadViews, WaitNew): a room never shows more than it
//     counts;
//   - lock order is messages.jsonl, then phase.json; nothing takes them the
//     other way round;
//   - message_limit never exceeds limits.messages_per_phase, extensions included;
//   - who may post where is decided here for every surface: Resolve picks the
//     room (the named phase, the agent's own, the only active one) and
//     CheckPost refuses an agent outside its own room; Post is resolve, check,
//     Say, and Read is pm chat's read-and-mark-seen, the bodies ops.Say and
//     ops.ChatStream wrap and the small pm executable calls directly;
//   - records go through the caller's state.State (the session's, opened
//     by internal/state/stateopen; every function takes it after the
//     store): creating a phase (CreatePhase), say, extend and
//     end-phase (WithPhase's RoomTx, whose Append refuses past the limit
//     itself), the phase reads Resolve, Active, History and WaitNew use,
//     SetAgents (UpdatePhase), the seen marks (Seen, MarkSeen), pm chat's
//     reads (Read, ReadViews: ReadRoom, in place and decoded into a view,
//     nothing allocated per message on fsstate) and WaitNew's follower
//     (FollowRoom from the actor's seen mark: a position is a message's
//     index, so the mark is the place to follow from on every backend); a
//     close writes store.Closing and announces store.PhaseClosedEvent, the
//     store's repair close's change and event. phase reaches no record
//     through the store;
//   - phase links no agent code (opening a phase with its role agents is
//     agent.OpenPhase, which records them through CreateThen under the
//     task's phases lock), so the short commands' executable can link it.
package phase
