// Package prompt loads prompt objects: markdown files whose YAML frontmatter
// is the interface (name, description, capabilities, model, runtime,
// code_designer) and whose body is the soul, rendered with {NAME}-style
// placeholders.
//
// It also names the built-in capabilities (capabilities.go) and validates
// every object's frontmatter against them on every load (LoadProject): the
// one place prompt objects are found, loaded and checked.
//
// LoadFiles and ProjectLayers are the one layered lookup of markdown files
// beside the prompt objects (tool docs in prompts/tools/ use it too). The
// files the project's state keeps (.plasmodium/prompts/) are read through
// the state interfaces (state.Prompts: Kept); this package joins no path
// onto the state directory.
//
// Invariants: a later source overrides an earlier one by name (builtin, then
// .plasmodium/prompts/, then ./prompts/); a malformed file is an error that
// names the file and line, never a silently skipped object.
package prompt
