// Package msglog turns bus events into the message log's lines — "from →
// to: text" with the cascade's depth — for every seat that shows it (pm
// talk and pm top in internal/tui, the dashboard's websocket and snapshot).
//
// Invariants:
//   - it is pure: a Cascade's lines depend only on the events it was fed,
//     in order; it reads no file and takes no lock;
//   - the nesting comes from the ids the events carry (an inbox call's
//     corr and cause, the cause of a tool event or a question), never from
//     timing or names: a call sits one level under the call that caused it,
//     what happens in a call one level under it, a reply at its call's level;
//     an event whose cause is unknown is at the top;
//   - a Cascade remembers only open calls and unanswered questions, so its
//     memory is bounded by what is in flight, not by the events seen;
//   - Line holds agent-written text as is: a seat escapes it for its medium
//     (Format for a terminal, textContent in the browser).
package msglog
