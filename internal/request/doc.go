// Package request implements ask_human: an agent's question to the human,
// stored as requests/rq-xxxxxx.json, answered with `pm answer ID "text"`.
//
// Invariants: requests are kept through the state interfaces
// (state.Requests: created, read, updated as one compare-and-set), so a
// reader sees one pending or answered, never half-written, and this
// package reaches no file; a request is answered at most once (a second
// answer is exit 5 and changes nothing); the asker blocks on the state's
// watcher (state.Scope{Requests: true}), never a sleep loop;
// every ask and answer is also an event on the bus (request.asked,
// request.answered).
package request
