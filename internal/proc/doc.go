// Package proc names processes safely (pid plus start time from /proc) and
// ends process groups. Linux only, like the rest of pm's process handling.
//
// Invariants: a pid is only signalled after its start time matches the one
// recorded when it was spawned, so a recycled pid is never killed; waits use
// pidfds, not sleep loops.
package proc
