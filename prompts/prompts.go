// Package prompts ships the built-in prompt objects. The markdown files beside
// this one are embedded into the pm binary; a project overrides any of them
// with a file of the same name in .plasmodium/prompts/ or ./prompts/. The
// code designer's angles (pm design) are in angles/, overridden and extended
// the same way from .plasmodium/prompts/angles/ and ./prompts/angles/.
package prompts

import "embed"

// FS holds the built-in prompt objects (*.md) and angles (angles/*.md).
//
//go:embed *.md angles/*.md
var FS embed.FS
