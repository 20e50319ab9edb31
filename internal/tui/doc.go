// Package tui is pm's terminal environment: `pm talk PO` (capability bar,
// message log, conversation, input) and `pm top` (the whole system), built
// on bubbletea, lipgloss and bubbles.
//
// Invariants:
//   - Every read and write of state goes through a Backend, whose production
//     implementation (FromSession) calls internal/ops and store read methods
//     only; the package takes no lock and builds no path.
//   - What happens is learned from the bus (Subscribe from its end cursor),
//     never by polling files: each delivery is one tea.Msg.
//   - Agent-written text is escaped (render.Line for log lines,
//     render.Terminal for replies) before it reaches the screen; a reply is
//     rendered as markdown (markdown.go) from the escaped text, so only
//     the renderer's own styling reaches the terminal.
//   - The message log is nested by the ids the events' payloads carry
//     (corr, cause, message: internal/msglog), never by timing or names.
//   - A screen opens on what came before: the bus's last events (log or
//     tail only: no state is inferred from them) and, in pm talk, the
//     object's transcript.
//   - Models are pure functions of their messages and their size: the clock
//     (the time zone timestamps are shown in) and the backend are injected,
//     so golden frames are byte-for-byte stable.
//   - pm top reads a snapshot only after an event that can change a panel
//     (ops.ChangesView: a task's state, messages, usage), one at a
//     time: events arriving while one is in flight cost one more, not one
//     each; streamed text, activity and tool events only reach the tail.
//   - pm top's NEEDS YOU is derived from the snapshot as the dashboard's
//     "Needs you" is (requests, then failed agents of live tasks no request
//     names); every action on it is a Backend call (Answer, Kill), and a
//     dismissal is this screen's own, by agent and run.
//   - The line mode (internal/cmd/talk) stays the default when stdout is not
//     a terminal, with --plain or TERM=dumb: UseTUI decides.
package tui
