package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/lite"
)

// Main runs pm with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if code, ok := forward(ctx, args, stdin, stdout, stderr); ok {
		return code
	}
	f := cmdutil.New(ctx, stdin, stdout, stderr)
	return Run(f, args)
}

// Run executes one command line with the given factory.
func Run(f *cmdutil.Factory, args []string) int {
	if f.RunAsAgent == nil {
		f.RunAsAgent = RunAgent
	}
	f.BeginStates()
	defer func() {
		if err := f.CloseState(); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "pm: closing the project's records: %v\n", err)
		}
	}()
	root := NewRoot(f)
	// Never nil: for nil cobra reads os.Args, which in a host is its own
	// command line (agent-run NAME), not the one a client sent.
	root.SetArgs(append([]string{}, args...))
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(f.Context)
	if err == nil {
		return 0
	}
	return report(f.IO.ErrOut, err)
}

// report is lite.Report: pm and pm-full turn errors into messages and exit
// codes in one place.
func report(w io.Writer, err error) int { return lite.Report(w, err) }
