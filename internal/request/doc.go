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
// request.answered, request.moot). Decide (decide.go) is the same request
// with a kind (loop, confirm) and a yes/always/stop/no reading of its
// answer (ParseVerdict); unanswered within its timeout, pm answers it "no
// (timed out ...)", and one whose asker stopped waiting "no (the agent
// stopped waiting)", so no decision is left pending for nobody.
//
// A request pm files when it gives up on an agent names it (CreateAbout,
// Request.Agent); answering it resumes the agent (task.Resume, called by
// ops.Answer). A pending request is moot when nobody can act on its answer
// (MootWhy: its task ended, its agent was killed or replaced; never the
// question of a done task's held merge, which waits for pm merge or reject); that is
// derived from the records, so every reader agrees before Settle (run by
// pm kill, kill --restart and done) writes it with why.
//
// Requests, and the task and agent records MootWhy reads, go through the
// caller's state.State (every function takes it after the store); the
// answer wait is its Watch on Scope.Requests.
package request
