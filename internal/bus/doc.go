// Package bus is pm's event bus: what happened, in order, for followers
// (pm log -f, pm demo, the supervisor, later a dashboard) to read and resume.
//
// Every event kind is a Kind constant declared in this package; no other
// package spells a kind as a string literal. Every kind's data is a struct
// declared here too (payload.go, PayloadFor), so publishers and readers
// (the dashboard, pm top and pm talk through msglog, pm log, notify, MCP)
// share typed fields instead of a map's keys.
//
// Invariants:
//   - An event's Data is its kind's payload struct (PayloadFor), or nil, or
//     Other for a kind this pm does not declare: Publish refuses any other
//     type (PayloadError), and a reader gets the struct back; data that does
//     not fit its kind's struct exactly (another version's line) is read as
//     Other, whole, never dropped;
//   - the line is what encoding/json writes (keys of the payload in their
//     order, which is the order a map of them was written in, so
//     events.jsonl did not change with the types): Event.MarshalJSON
//     writes it without building encoding/json's encoders (a short command
//     publishes one event), reading a payload's fields from its struct,
//     so a field added to a payload needs no codec change
//     (TestPayloadsRoundTrip fills every field of every kind's payload);
//   - Publish stamps the time (and "human" as the actor when none is given),
//     masks the publisher's secrets, and appends the event as one whole line
//     (File: jsonl.Append under the file's lock), or fails: it never writes
//     half an event;
//   - Subscribe(ctx, from) yields every event after the cursor from exactly
//     once and in order, each with the cursor just past it, so a consumer that
//     stores the last cursor and subscribes again misses nothing and sees
//     nothing twice;
//   - a Cursor is opaque and serializable (String, ParseCursor, JSON text); it
//     names the file it belongs to by a checksum of the file's first bytes,
//     so a bus recreated under the same name (pm reset) is read from its
//     beginning, never resumed mid-line. Two files whose first 512 bytes are
//     equal (the same first records, to the nanosecond) are not told apart;
//   - a torn or malformed line is skipped and reported through the bad-line
//     reporter; an unterminated last line is not yet written and is read once
//     its writer (or the next append) ends it;
//   - followers block on file events (internal/watch) and never poll; a
//     watcher error (an overflowed queue) triggers a re-read, not a failure;
//     a spurious wake-up delivers nothing twice;
//   - Follower is the same follow mechanism for any JSONL file (pm chat
//     --follow reads a phase's messages.jsonl with it);
//   - Seq is the bus over a numbered log (Log: a hub's stream, natsbus),
//     for a project whose records are on a hub: the same stamping, masking
//     and lines as File; a cursor is the log's number (the same on every
//     machine), and a purge (Reset) keeps the numbering, so an old cursor
//     goes on with what comes next. Unavailable is the bus of a hub
//     project whose records were not opened: every call fails, so no event
//     goes to a local file the other machines do not see.
//
// Error policy (a failed bus write is reported where it matters, never
// silently dropped):
//   - Bus.Publish returns every error; the bus itself drops nothing;
//   - an event that announces a record kept elsewhere (task.json, agent.json,
//     messages.jsonl, an inbox) is published with store.(*Store).Notify: the
//     operation already happened, so failing it afterwards would invite a
//     retry that duplicates the record. Notify reports the failure on the
//     store's warning stream (the command's stderr, an agent's log) and the
//     operation succeeds. Every publisher in pm today is of this kind;
//   - a caller whose event is its only record must use Bus().Publish and
//     return the error;
//   - subscribers return Subscribe's errors (a cancelled ctx ends a follow).
package bus
