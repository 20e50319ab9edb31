// Package cmdutil is what every command shares: the Factory (injected
// streams, clock, ids, environment), identity (PM_AGENT) and the rules that
// pick the task and phase a command acts on.
package cmdutil
