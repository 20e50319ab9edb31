// Package request implements ask_human: an agent's question to the human,
// stored as requests/rq-xxxxxx.json, answered with `pm answer ID "text"`.
//
// Invariants: a request file is written only by the store (CreateRequest,
// UpdateRequest), atomically under its lock, so
// a reader sees it pending or answered, never half-written; a request is
// answered at most once (a second answer is exit 5 and changes nothing); the
// asker blocks on file events in requests/ (fsnotify), never a sleep loop;
// every ask and answer is also an event on the bus (request.asked,
// request.answered, request.moot).
//
// A request pm files when it gives up on an agent names it (CreateAbout,
// Request.Agent); answering it resumes the agent (task.Resume, called by
// ops.Answer). A pending request is moot when nobody can act on its answer
// (MootWhy: its task ended, its agent was killed or replaced); that is
// derived from the records, so every reader agrees before Settle (run by
// pm kill, kill --restart and done) writes it with why.
package request
