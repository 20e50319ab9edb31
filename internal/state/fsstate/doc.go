// Package fsstate is the state interfaces (internal/state) over a state
// directory, .plasmodium/: the store (internal/store) does the work, with
// its on-disk layout, its flocks, its crash ordering and repairs unchanged
// (store/doc.go has the layout and the lock order). What this package adds:
//
//   - the store's exit-coded errors also match the state sentinels
//     (ErrNotFound for exit 4, ErrInvalid for exit 2);
//   - RoomTx.Append keeps the room's limit itself (ErrClosed, ErrRoomFull),
//     where the store's PhaseTx.Append leaves it to its callers;
//   - mailbox positions are inbox.jsonl byte offsets (inbox.cursor's unit);
//     room positions are message indexes (ReadRoom counts the lines before
//     from and hands on the rest in place; FollowRoom is the file bus's
//     follower, bus.Follower, keeping its byte offset across wake-ups);
//   - CheckCaches (state.CacheChecker) is pm doctor --check's look at the
//     caches only this backend keeps: the count marks and the task and
//     phase indexes, compared with the records, changing nothing;
//   - a design's run lock is an flock the kernel drops with its holder;
//   - Watch is inotify on the directories that hold the scope
//     (internal/watch): the task's, its phases' and its children's,
//     agents/NAME, requests/;
//   - the agent logs (state.AgentLogs, agentlogs.go) are the files they
//     have always been: agents/NAME/transcript.jsonl and stream.jsonl,
//     costs.jsonl, one JSON line each (jsonl.Append), positions byte
//     offsets; a .plasmodium/ made before the seam reads as it did;
//   - an append to a transcript or reply file, its check of the total
//     (state.LogBounds) and a cut take the file's lock once; a file over
//     its total is rewritten (lockedfile.WriteAtomicFrom: temp, fsync,
//     rename, the directory synced) with what is kept, after a header line
//     (no entry) holding what was dropped and the base that keeps every
//     kept line's position (logbound.go): a position is then the line's
//     offset plus the base, so positions readers hold stay valid across
//     any number of cuts; an uncut file has no header and a base of 0; a
//     cut that leaves the file over its total is planned again only at
//     state.PlanAgainAt (this process's memory of the file's size);
//
// It passes internal/state/statetest (fsstate_test.go). An llm agent's
// transcript as go-openai messages is internal/state/transcript, apart
// because it links go-openai and fsstate is linked by the short commands'
// executable.
package fsstate
