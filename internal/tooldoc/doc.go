// Package tooldoc is the documentation of every tool a model can call (issue
// 12, the seed's P002): one markdown doc per tool in one format,
//
//	# Tool: NAME
//
//	## Summary
//	one line
//
//	## Parameters
//	| name | type | required | description |
//	| --- | --- | --- | --- |
//	| path | string | yes | ... |          (or "(none)")
//
//	## Examples
//	## Notes
//
// so that its first ten lines (the preview code-designer mode puts before
// the model ahead of each call: title, summary and the first parameters,
// required ones first) say what the tool is and what it takes.
//
// Where docs come from (Load), later wins:
//   - a prompt object's doc, generated from its frontmatter (description,
//     capabilities, model, runtime) and the {message} it takes (ForObject);
//   - the built-in docs, prompts/tools/NAME.md embedded in the binary;
//   - project overrides, .plasmodium/prompts/tools/NAME.md then
//     ./prompts/tools/NAME.md, found by the same layered lookup as prompt
//     objects (prompt.LoadFiles, prompt.ProjectLayers).
//
// Invariants:
//   - every built-in capability (prompt.BuiltinNames) has a built-in doc, and
//     its Parameters table names exactly the properties of the tool's JSON
//     Schema with their types and required flags (CheckSchema; the tests of
//     this package and of internal/capability fail otherwise);
//   - a doc file that is malformed (no "# Tool: NAME" first line, a name
//     that is not the file's, a missing Summary or Parameters section, a bad
//     table row) or that documents no known tool is an error naming the file
//     and line, never a silently skipped doc;
//   - a Registry is read once and never changes: a host loads it once per
//     run and every preview of that run reads the same docs.
package tooldoc
