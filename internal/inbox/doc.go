// Package inbox carries prompt-object-to-prompt-object messages: requests,
// replies and notices appended to agents/NAME/inbox.jsonl.
//
// Invariants:
//   - a call appends a request with a fresh correlation id to the callee's
//     inbox, starts the callee if it is not running, and blocks (fsnotify, no
//     polling) until the reply with that id lands in the caller's inbox;
//   - every message is also an event on the bus ("from → to: text"), so
//     pm log -f shows the cascade;
//   - Serve answers requests one at a time and advances a cursor only after
//     the reply is written: a respawned agent never loses a request (it may
//     answer the one it was working on again); it reads the mailbox, keeps
//     its cursor and waits through the state interfaces (state.Mailboxes,
//     state.Watcher), reaching no file itself; Call still watches the two
//     agents' directories (pending in internal/state/layering_test.go);
//   - a resident prompt object's agent is named after the object;
//   - Chains walks the cascades a call would extend back through the
//     requests' causes (bounded by MaxChain and MaxChains), for the loop
//     breaker: an agent with a cause waits for that request's caller; one
//     with none (an exec resident, which answers no request itself) for the
//     callers of every request past its cursor, which its host moves to
//     the end when its run ends (store.SkipInbox).
package inbox
