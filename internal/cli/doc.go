// Package cli is pm's entry point: it builds the cobra command tree from the
// command packages under internal/cmd and is the one place that turns errors
// into messages ("pm: ...", "Try: ...") and exit codes (SPEC.md: 0 ok, 1 error,
// 2 usage, 3 limit, 4 not found, 5 wrong state, 124 timeout).
package cli
