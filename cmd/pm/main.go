// Command pm orchestrates teams of LLM agents. See README.md.
//
// This executable is small on purpose: it runs the short commands itself
// (internal/lite) and hands every other command line to pm-full, installed
// beside it (cmd/pm-full), by execve.
package main

import (
	"os"

	"github.com/plasmodium/pm/internal/lite"
)

func main() {
	os.Exit(lite.Main(os.Args[1:], func(args []string) int { return lite.ExecFull(args, os.Stderr) }))
}
