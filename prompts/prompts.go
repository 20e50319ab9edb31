// Package prompts ships the built-in prompt objects. The markdown files beside
// this one are embedded into the pm binary; a project overrides any of them
// with a file of the same name in .plasmodium/prompts/ or ./prompts/.
package prompts

import "embed"

// FS holds the built-in prompt objects (*.md).
//
//go:embed *.md
var FS embed.FS
