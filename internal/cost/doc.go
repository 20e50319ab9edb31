// Package cost turns token usage into dollars: a price table per model
// (input, cached input, cache write and output, in dollars per million
// tokens) shipped for common OpenAI, Anthropic and Google models and
// overridable per model in config.json (`prices`), the ledger record of one
// model call or one agent run (Entry, kept in .plasmodium/costs.jsonl by
// the store), and sums over entries (Sum) with what is unknown kept apart.
//
// # Invariants
//
//   - Unknown is never zero. A model with no price, or a runtime that
//     reports no usage, gives an Entry whose USD is nil; a Sum counts such
//     entries in Unknown and says "unknown" (or "$X + unknown") rather than
//     pretending they cost nothing. A budget in dollars can only be checked
//     against what is known: that is said where the budget is reported.
//     Priced fills only an unknown entry, so the store prices the ledger's
//     unknown entries again as it reads them (a price added later counts)
//     and never changes a figure that was known.
//   - A cost reported by the runtime itself (Claude Code's total_cost_usd)
//     wins over the table: it is what the vendor billed for.
//   - The shipped table is dated (Table's comment) and prices change: a
//     config entry for the same model always wins, and a model name matches
//     a table entry exactly, or with a date or "-latest" suffix, after any
//     provider prefix ("openai/", "models/") is dropped. A near name
//     ("gpt-4o-audio-preview") matches nothing: unknown, not a wrong price.
//   - The package is pure: no files, no clock, no pm imports.
package cost
