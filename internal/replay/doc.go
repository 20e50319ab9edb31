// Package replay plays recorded model turns through the OpenAI-protocol test
// server (internal/openaitest), so pm demo runs the real binary, real agent
// processes and the real go-openai client fully offline.
//
// Invariants: a replay is always labelled as one wherever pm prints it; each
// agent (found by its system prompt) has its own cursor through its role's
// steps; a step with "until" repeats until the last tool result contains that
// text, which is how a recorded model "waits" without knowing the timing.
package replay
