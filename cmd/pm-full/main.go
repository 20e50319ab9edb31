// Command pm-full is pm's whole command line (internal/cli). People and
// agents run pm (cmd/pm), which runs the short commands itself and execs
// this for the rest; run directly, it behaves the same as pm.
package main

import (
	"os"

	"github.com/plasmodium/pm/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
