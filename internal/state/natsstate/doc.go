// Package natsstate is pm's state (internal/state) on NATS JetStream, for a
// project shared by several machines (issue 24): every process that can
// reach the hub sees one state, with the guarantees state/doc.go writes
// and statetest checks.
//
// Where each thing lives, for project P (see Open; the names are
// natsx.ProjectNames', and no two projects on a hub share one):
//   - records (tasks, phases, agents, requests, designs, subtask
//     contexts, mailbox cursors) in the key-value bucket pm_P, one key
//     each (task.ID, phase.TASK.ID, agent.NAME, req.ID, design.ID,
//     ctx.ID, cursor.NAME); every update is a compare-and-set on the
//     key's revision, retried, so concurrent updates lose nothing;
//   - rooms in stream PM_ROOMS_P, one subject per phase
//     (pm.P.room.TASK.PHASE), appended by natsx/room: the stream refuses
//     any message past the limit, whatever the locks say;
//   - mailboxes in stream PM_MAIL_P (pm.P.mail.NAME): a position is the
//     stream sequence after an entry; design logs in PM_DLOG_P; a design's
//     working copy in the key dcopy.ID, its run lock the lease design.ID;
//     a task's phase progress in the key progress.ID (one JSON list,
//     appended by compare-and-set);
//   - a room's position is its messages' Pm-Index (natsx/room): ReadRoom
//     reads from the one after it, FollowRoom again after each Watch
//     wake-up (state.FollowRoomByWatch); the one message after the
//     position is the room's last, read from the stream's leader with no
//     consumer (a consumer per wake-up could stall 10 s, issue 24); a
//     subject read by sequence (a mailbox, a transcript, a reply stream,
//     the ledger) likewise: its last message, then a get per message for
//     a few, a consumer only for a longer read (natsx.Conn.ReadSubject);
//   - the critical sections (WithTasks, a task's phases, a room) are
//     leases in the bucket pm_P_locks (natsx/lease): taken by create,
//     renewed while held, released at the end, and expiring if their
//     holder dies; a waiter is woken by the key's watch, never a sleep;
//   - the bus in stream PM_BUS_P (natsbus, Bus);
//   - the agent logs (state.AgentLogs, agentlogs.go): transcripts in
//     PM_TRANSCRIPT_P (pm.P.transcript.NAME), kept to their total
//     (Bounds) until the agent is removed; a resident's streamed replies
//     in PM_REPLY_P (pm.P.reply.NAME), kept to theirs and 24 hours at
//     most, and woken on by a Watch of the agent with Replies; a cut is a
//     purge of the subject up to a sequence, its mark the last message of
//     NAME's subject + ".cut", written before the purge, cuts of a subject
//     one at a time under its own lock, one over its bound after a cut
//     planned again only at state.PlanAgainAt (logbound.go); the cost ledger in PM_COSTS_P (pm.P.costs),
//     kept, as on files; a transcript or reply entry is cut to EntryLimit
//     (state.FitEntry once, as the files cut theirs), and none passes
//     state.MaxEntry bytes (the streams' MaxMsgSize); a position is the
//     sequence after an entry, as a mailbox's (ReadCosts reads the ledger
//     from one).
//   - agents' leases in the bucket pm_P_agents (HoldAgent: one live host
//     per agent), their fence marks (the last per agent, pm.P.fence.NAME,
//     lease.Writer) in the rooms stream PM_ROOMS_P of a project made now
//     (room.OpenFenced: each mark replaces the one before by rollup), in
//     the stream PM_FENCE_P of one made before, workers in the bucket
//     pm_P_workers (a key each, expiring with the leases' TTL): opened at
//     their first use (machines.go).
//
// A project is made once (Create, by pm init --store: its entry in the
// bucket PM_PROJECTS) and opened by Dial from a config anywhere (store.url
// and store.project), which refuses a project the hub does not have.
//
// Invariants:
//   - Every request to the hub rides out a cluster's change of leader
//     (natsx.Do, requests.go): reads as they are; every write carries a
//     message id of its own, so a repeat of one that landed is a
//     duplicate, and a compare-and-set (an update, a create, a delete at a
//     revision) whose repeat is refused because its first attempt moved
//     the key on is recognised as that attempt (its id is the key's last):
//     an update is never applied twice. The leases (a critical section's,
//     an agent's, a worker's registration) are natsx/lease's, whose writes
//     are recognised as their own likewise (a message id drawn per lease):
//     a take whose answer was lost is held, never "held by another"
//     (TryLockDesign), a renewal kept, a release done. A wait for a held
//     lease is lease.WaitFree, bounded by its WaitBound (a watch, read
//     again each TTL), then taken or waited for anew. The agent logs'
//     appends (transcripts, reply pieces, the ledger) carry a message id
//     of their own, so a repeat stores an entry once: a cost is never
//     counted twice. A create is natsx.Create (a delete marker is no
//     value). The workers' watch (WatchWorkers) is made within the same
//     bound, asked again while unanswered, and lives as long as its
//     caller's context.
//   - A room append carried by a host's lease (RoomTx.AppendFenced,
//     fence.go) in a project whose rooms stream holds the fence subjects
//     is one atomic batch of the message and the host's fence mark:
//     refused whole (state.ErrLeaseLost) once a newer holder's takeover
//     mark is stored; a room that moved on is retried as any append. A
//     project made before keeps its streams (none is ever reconfigured)
//     and appends as without a lease. pm reset purges the rooms' subjects
//     only, never the fence marks.
//   - Dial never makes a project: a config that names one the hub lacks
//     (a wiped hub, a typo) is refused, not given an empty state.
//   - Nothing polls: Watch is ordered consumers on the scope's subjects
//     (an agent's reply stream only when the scope asks for it: a waiter
//     on the mailbox is not woken by each piece of the agent's streamed
//     reply), started after the streams' last sequence, so every change
//     stored after Watch was called wakes a check (a consumer's error
//     too: natsx.Conn.Wake); the check after a wake-up runs
//     once each stream's leader holds what woke it (natsx.Conn.Stored: the
//     consumer may be on a replica ahead of the leader the reads go to).
//   - A returned record is decoded from what is stored: a caller's change
//     to it never reaches the state.
//   - Every stream and bucket has natsx.Conn.Replicas(): on a cluster an
//     acknowledged write survives the loss of a node.
package natsstate
