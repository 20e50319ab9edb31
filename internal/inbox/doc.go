// Package inbox carries prompt-object-to-prompt-object messages: requests,
// replies and notices posted to the agents' mailboxes (state.Mailboxes;
// agents/NAME/inbox.jsonl on the files).
//
// Invariants:
//   - a call posts a request with a fresh correlation id to the callee's
//     mailbox, starts the callee if it is not running, and blocks (Watch of
//     both agents at once, state.WatchAny; no polling) until the reply with
//     that id lands in the caller's mailbox, read from the mailbox's end as
//     it was before the request went (MailboxEnd), so no reply slips past;
//   - every message is also an event on the bus ("from → to: text"), so
//     pm log -f shows the cascade;
//   - Serve answers requests one at a time and advances a cursor only after
//     the reply is written: a respawned agent never loses a request (it may
//     answer the one it was working on again); it reads the mailbox, keeps
//     its cursor and waits through the state interfaces (state.Mailboxes,
//     state.Watcher), reaching no file itself; so do Send (Post), Call,
//     Chain (ReadMailbox) and IdleOut (MailboxEnd past the cursor: a
//     request not answered yet keeps the resident); a resident's reply
//     stream too (Stream appends to state.Replies; Call reads it from its
//     end as it was before the request, woken by the same Watch of the
//     callee), so a caller on another machine of a hub project gets the
//     pieces as they come;
//   - a resident prompt object's agent is named after the object;
//   - Chains walks the cascades a call would extend back through the
//     requests' causes (bounded by MaxChain and MaxChains), for the loop
//     breaker: an agent with a cause waits for that request's caller; one
//     with none (an exec resident, which answers no request itself) for the
//     callers of every request past its cursor, which its host moves to
//     the end when its run ends (agent.skipMailbox).
package inbox
