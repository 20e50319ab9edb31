// Package design is the code designer's loop (issue 12, the seed's P003-P005):
// a file is cut into units (units.go: Go top-level declarations via go/ast,
// blank-line blocks otherwise), and each unit is reviewed pass after pass
// from several angles until the reviews stop changing.
//
// Each pass over a unit: every angle's review is a verify SupervisorRequest
// answered by the worker model under the angle's system prompt with an
// AngleResult; then the supervisor model reads the reviews and answers a
// Plan (verify: nothing to change; refine, analyze or tool_call: a request
// the worker carries out, answered by a WorkerResponse). The pass ends with
// the convergence test of Criteria.
//
// Invariants:
//   - every model answer is structured output: asked for with a JSON Schema
//     response format derived from the Go types by github.com/google/
//     jsonschema-go (schema.go), then validated against that schema and
//     the rules a schema cannot state; a malformed answer is asked again,
//     with what was wrong, at most MaxRetries times, then the design ends
//     in the error state;
//   - the state machine is the seed's (machine.go): initializing →
//     processing → converged | max_iterations | error → complete, and no
//     other move; a unit converges after MinPasses passes of which the last
//     IssueStability found the same number of issues and the last
//     ContentStability changed nothing; a unit that reaches MaxPasses ends
//     max_iterations; the design's outcome is error if a unit failed,
//     max_iterations if any unit did, else converged;
//   - all progress is in State and the Journal saves it after every step
//     (each angle's review, each pass's end): an interrupted Run leaves it
//     processing at its Cursor and a new Run on the saved State goes on from
//     there, asking again only the request the interruption cut short;
//   - every request and response (and each plan and state change) is one
//     Entry recorded through the Journal; a response carries its request's
//     id, its model, tokens and duration; Usage sums them per role;
//   - units are contiguous, so State.Content is always a whole file; a
//     refine that would make a Go file unparsable is refused (recoverable)
//     and the unit kept;
//   - the engine works on the State only: it reads and writes no file (the
//     journal and the temporary copy are the caller's, through the store).
package design
