// Package cmdutil is what every command shares: the Factory (injected
// streams, clock, ids, environment), identity (PM_AGENT) and JSON printing.
//
// It is a leaf of the command layer: only internal/cmd/* and internal/cli
// import it. What an operation does, and the rules that pick the task and
// phase it acts on, live in internal/ops.
package cmdutil
