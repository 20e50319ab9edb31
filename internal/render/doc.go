// Package render writes pm's records (messages, phases, tasks, history, the
// result of pm done) as people read them. The CLI and the model tools print
// through it, so a human and an agent see the same text for the same record.
//
// Invariants:
//   - render only formats: it reads nothing from disk and changes nothing;
//   - text that agents (or hand edits) can write is printed through Terminal
//     (multi-line text) or Line (one-line fields), so no control character or
//     escape sequence reaches a terminal raw; JSON output bypasses render and
//     keeps the exact text;
//   - every function writes whole lines ending in a newline, except PhaseLine,
//     which returns one line without it.
package render
