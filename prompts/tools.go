package prompts

import "embed"

// Tools holds the built-in tool documentation (tools/NAME.md, one per
// built-in capability, in internal/tooldoc's format); a project overrides
// one with .plasmodium/prompts/tools/NAME.md or ./prompts/tools/NAME.md.
//
//go:embed tools/*.md
var Tools embed.FS
