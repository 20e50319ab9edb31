// Package notify tells a person when something needs them: config
// notify.command is run with one JSON Event on its stdin when an agent asks
// the human, a task is done, a task stalls (its owner left without pm
// done), an agent fails (given up on) or a budget stops one.
//
// Invariants:
//   - The notifier is a bus subscriber. It runs inside pm supervise, which
//     runs whenever agents live, and catches up with the bus on its way
//     out. Its cursor is saved in .plasmodium/notify.cursor after each
//     notification sent, so a later supervisor resumes where the last one
//     stopped (a crash between a run and its save may repeat that one
//     notification). pm config set notify.* moves the cursor to the bus's
//     end, so turning notifications on does not replay the past; with no
//     cursor at all it starts at the bus's end.
//   - Events that happen while no agent lives (a person working a
//     runtime-none task) are notified when the next supervisor starts.
//   - One command at a time, in bus order, each bounded by
//     notify.timeout_seconds (default 10): its process group is killed
//     after that and the next event goes on.
//   - config.json is re-read for each event, so pm config set
//     notify.command takes effect without a restart.
//   - A failing command is logged (the supervisor's log), never retried.
package notify
