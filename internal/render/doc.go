// Package render writes pm's records (messages, phases, history, events;
// tasks and pm done's result in render/taskview) as people read them. The CLI and the model tools print
// through it, so a human and an agent see the same text for the same record.
//
// Invariants:
//   - render only formats: it reads nothing from disk and changes nothing;
//   - text that agents (or hand edits) can write is printed through Terminal
//     (multi-line text) or Line (one-line fields), so no control character or
//     escape sequence reaches a terminal raw; JSON output bypasses render and
//     keeps the exact text;
//   - the fast path for a plain message (printPlain: no fmt, no escaping)
//     writes byte for byte what the general path writes (FuzzPrintMessage);
//     so does Printer (pm chat), which takes plainness from the decoder's
//     store.TextClass and the local clock from the zone's span (FuzzPrintView);
//   - every function writes whole lines ending in a newline, except PhaseLine
//     (and taskview's HealthLine and HealthDetail), which return one line
//     without it;
//   - render does not import package task: a task's views are render/taskview,
//     so the short commands' executable, which prints rooms, links render
//     without git and agents;
//   - colour (pm log) only when the output is a terminal and NO_COLOR is
//     unset; lines are cut to the terminal's width only on a terminal (Width
//     is 0 for pipes and files, which get whole lines).
package render
