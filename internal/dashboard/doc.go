// Package dashboard is `pm dashboard`: one HTTP server that shows a team of
// agents live in a browser and lets the human steer it. The page and scripts
// use the same documented API (docs/dashboard.md): GET /api/state (a
// snapshot and the bus cursor it was taken at), GET /api/events?cursor=C (a
// websocket of every bus event after C), GET /api/task?id= (one task in
// detail), GET /api/timeline?task=&before=C (one task's events before a
// snapshot's cursor) and POST /api/<action> (the human's write operations,
// through internal/ops like the CLI).
//
// Invariants:
//   - the cursor of a snapshot is taken before the snapshot is read, so a
//     client that applies the events after it misses nothing (an event may
//     already be reflected in the snapshot: clients apply events idempotently);
//   - a websocket sends every bus event after its cursor exactly once and in
//     order, each with the cursor just past it (internal/bus Subscribe), so a
//     client that reconnects with its last cursor, to this server or to a
//     restarted one, misses nothing and sees nothing twice;
//   - a client's memory is bounded: at most Config.MaxQueue events wait for
//     a slow websocket; a client further behind is sent {"type":"resnapshot"}
//     and closed, never buffered without bound;
//   - a server that listens beyond loopback has a token, or Open refuses;
//     with a token every API call carries it (Authorization: Bearer, or the
//     cookie set when the page is opened with ?token=); a cookie-authenticated
//     POST also carries the X-PM-CSRF header and a same-origin Origin, and a
//     websocket whose Origin is another site is refused;
//   - request bodies are capped (Config.MaxBody) and decoded strictly;
//   - write actions run as the human through internal/ops, so they obey the
//     same checks and land on the bus like the CLI's; the token is never
//     logged or put in a payload;
//   - the page reads GET /api/state once and then applies each event to its
//     own state; it reads the snapshot again only after a resnapshot frame or
//     a reset event (a reconnect resumes from its cursor with no snapshot);
//   - an event frame carries the event as stored and, for a message of the
//     log, its internal/msglog line (depth from a cascade per connection,
//     seeded on a resume from the last seedEvents events before its cursor),
//     and, for an event that may change a task (ops.ChangesState), that
//     task's health when the frame was built, which the page takes as is;
//   - a snapshot's room says who is typing by the records alone (RoomView:
//     running with the activity "working", agent.SetActivity), and the
//     page applies the same rule to agent.activity events; nothing else is
//     taken for typing;
//   - costs are the ledger's sums (ops.Costs), what has no price counted
//     as unknown, never as $0; the page adds agent.turn's dollars to them;
//   - GET /api/timeline returns only events before its cursor, so with the
//     events a page followed from that cursor each event shows once;
//   - the page renders agent text with textContent, never as HTML, and
//     bounds it (a message, a description, a room, the timeline, a stream).
package dashboard
