// Package loopguard is the loop breaker's one mechanism for repeated calls:
// it counts the same call (a tool and its arguments, or a pm command line)
// made again and again with the same result, and says when the next one
// would be the Limit-th in a row. It is pure (no store, no clock): the llm
// loop keeps one per agent for its tool calls, an exec agent's host one for
// the pm commands its broker runs; what to do on a hit (ask the human) is
// theirs. Its other pure check is Cascade: a call that comes back to an
// object waiting in the chain of calls it would extend (A → B → A), which
// ops.CheckCascade runs on inbox.Chains for every caller, llm or exec.
//
// Invariants:
//   - a repetition is the same call AND the same result: a call whose
//     result changed (a chat that waited and saw new messages, a status
//     that moved) starts the count again, so polling that makes progress is
//     never taken for a loop;
//   - arguments are compared as compact JSON when they are JSON (spaces do
//     not make a call different); results are kept as a hash, never whole;
//   - Check never changes the count; only Record and Reset do; a Guard is
//     safe for concurrent use;
//   - Limit 0 (or below 2) turns the guard off: Check never reports a hit.
package loopguard
