// Package designmode decides whether an agent runs in code-designer mode
// (issue 12, the seed's P001) and records how it came to: the mode's
// ModeConfig is Mode {enabled, source, since}, kept in the agent record
// (store.Agent.CodeDesigner) and shown by pm agents.
//
// Four sources can set it, each to on or off. The most specific to one
// invocation wins:
//
//	cli          --code-designer[=true|false] on pm task, pm send, pm talk
//	env          PM_CODE_DESIGNER=1|0 (also true/false, on/off, yes/no)
//	frontmatter  code_designer: true|false in the prompt object
//	config       code_designer.enabled in .plasmodium/config.json
//
// CLI beats the environment (a flag is typed for this one command, the
// variable is set for a shell), both beat the prompt object (a per-object
// default), which beats the project config (the project-wide default). A
// source that is not set defers to the next; when none is set the mode is
// off with no source.
//
// Invariants: Resolve is pure (no environment or clock of its own: the
// caller passes both), so the precedence is one table-tested function; an
// unreadable PM_CODE_DESIGNER value is an error with a Try: line, never read
// as off; Since is set only when the mode is on, and Keep carries it over
// when a re-resolution leaves the mode on from the same source.
package designmode
