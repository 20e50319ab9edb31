// Package proc names processes safely (pid plus start time from /proc) and
// ends process groups. Linux only, like the rest of pm's process handling.
// It is the low-level half of the process driver: being internal to
// internal/driver, nothing else can import it, so every signal pm sends to an
// agent goes through the driver.
//
// Invariants: a pid is only signalled after its start time matches the one
// recorded when it was spawned, so a recycled pid is never killed; waits use
// pidfds (and a pipe for cancellation), not sleep loops.
package proc
