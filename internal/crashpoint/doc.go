// Package crashpoint marks the points between the steps of pm's multi-step
// changes, so tests can stop a real process at each of them.
//
// Invariants:
//   - Hit costs one atomic add when no test asks for a crash: production
//     runs never set PM_TEST_CRASH_AT, and nothing else reads it;
//   - with PM_TEST_CRASH_AT=N the process SIGKILLs itself at its Nth hit
//     (no deferred function, no flush runs: exactly what kill -9 does), and
//     with PM_TEST_CRASH_AT=NAME at the first hit of that name; hits are
//     counted in program order, so N = 1, 2, ... enumerates every point of a
//     command deterministically;
//   - PM_TEST_CRASH_TRACE=1 writes each hit's number and name to stderr, so
//     a test can see how many points a command passes;
//   - SetHook is for in-process tests only: it runs a function at each hit
//     (to interleave two operations at an exact point, never a sleep).
package crashpoint
