// Package proc names processes safely (pid plus start time: /proc on
// Linux, kern.proc.pid on macOS) and ends process groups.
// It is the low-level half of the process driver: being internal to
// internal/driver, nothing else can import it, so every signal pm sends to an
// agent goes through the driver.
//
// Invariants: a pid is only signalled after its start time matches the one
// recorded when it was spawned, so a recycled pid is never killed; waits use
// pidfds on Linux, a kqueue on macOS (and a pipe for cancellation), not
// sleep loops. KillMarked finds a run's processes by their environment in
// /proc: on macOS, which has no /proc, it finds none (the process group and
// the host's end are what contain a run there).
package proc
