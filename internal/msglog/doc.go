// Package msglog turns bus events into the message log's lines — "from →
// to: text" with the cascade's depth — for every seat that shows it (pm
// talk and pm top in internal/tui, the dashboard's websocket and snapshot).
//
// Invariants:
//   - it is pure: a Cascade's lines depend only on the events it was fed,
//     in order; it reads no file and takes no lock;
//   - a call sits one level under the call that caused it: a request from A
//     to B puts B one level under A, B's tool calls and results and its
//     reply sit at B's level (the PromptObjects seed's cascade);
//   - a Cascade remembers one depth per agent name, so its memory is
//     bounded by the number of agents, not of events;
//   - Line holds agent-written text as is: a seat escapes it for its medium
//     (Format for a terminal, textContent in the browser).
package msglog
