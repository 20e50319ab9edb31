// Package cli is pm's entry point: it builds the cobra command tree from the
// command packages under internal/cmd and is the one place that turns errors
// into messages ("pm: ...", "Try: ...") and exit codes (SPEC.md: 0 ok, 1 error,
// 2 usage, 3 limit, 4 not found, 5 wrong state, 124 timeout).
//
// Invariant: a line an exec agent's host runs for its agent (RunAgent) is
// decided on the command cobra resolves for it, on a tree built like Run's:
// only agentCommands (deny by default), named first, with no inherited flag
// and no flag naming a place on the host (hostPlaces, --context-file -
// aside); anything else runs nothing. Run never hands cobra nil arguments
// (cobra would read the process's own command line).
package cli
