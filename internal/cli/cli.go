package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
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
	root := NewRoot(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(f.Context)
	if err == nil {
		return 0
	}
	return report(f.IO.ErrOut, err)
}

// report prints err once, with its Try: hint, and maps it to an exit code.
// This is the only place errors become exit codes.
func report(w io.Writer, err error) int {
	if errors.Is(err, context.Canceled) {
		return 130
	}
	code := errs.CodeOf(err)
	if code == errs.Failure && isUsage(err) {
		code = errs.Usage
	}
	fmt.Fprintf(w, "pm: %v\n", err)
	switch try := errs.TryOf(err); {
	case try != "":
		fmt.Fprintf(w, "Try: %s\n", try)
	case code == errs.Usage:
		fmt.Fprintln(w, "Try: pm help")
	default:
		fmt.Fprintf(w, "Try: %s\n", errs.Hint(err))
	}
	return int(code)
}

// isUsage recognises cobra's own argument and flag errors.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "requires at most", "required flag", "bad flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
