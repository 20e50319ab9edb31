// Package errs holds the one error type that carries a process exit code and a
// "Try:" hint. Domain packages return these; internal/cli is the only place that
// turns them into an exit status, so the mapping in SPEC.md lives in one spot.
//
// Invariant: an error without a code is a plain failure (exit 1); an error is
// never printed twice.
package errs
