// Package memstate is the state interfaces (internal/state) in memory, for
// unit tests of the domain packages: no files, no locks beyond mutexes, one
// process.
//
// Invariants:
//   - records are kept JSON-encoded, so a record handed in or returned is
//     never shared with the state (as with every real backend);
//   - mu guards every map; the critical sections (WithTasks, WithPhases,
//     WithPhase) are mutexes of their own, taken before mu and never while
//     holding it, so fn may call any method;
//   - every write closes the changed channel: Watch re-checks on any write
//     (wider than its scope; spurious wake-ups are allowed);
//   - a mailbox position is the index of the next entry, a transcript's
//     and a reply stream's too, counted from the log's start across its
//     cuts (Bounds: the first kept entry's position is the count of those
//     cut); a room's position
//     a message's index, FollowRoom reading again after each Watch wake-up
//     (state.FollowRoomByWatch);
//   - a design's run lock lives as long as the Mem (one process).
//
// It passes internal/state/statetest (memstate_test.go).
package memstate
