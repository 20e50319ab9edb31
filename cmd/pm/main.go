// Command pm orchestrates teams of LLM agents. See README.md.
package main

import (
	"os"

	"github.com/plasmodium/pm/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
