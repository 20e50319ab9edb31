// Package ids makes and checks the ids of tasks (tk-), phases (ph-), messages
// (msg-) and requests (rq-), six hex digits each, and agent names like
// "cedar_a1b2". The random source is injectable so tests are deterministic.
//
// Invariant: every id that reaches a file path has passed Parse or
// ValidAgentName, so no id can name a path outside the state directory.
package ids
