package lite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/render"
)

// Report prints err once, with its Try: hint, and maps it to an exit code.
// This is the only place errors become exit codes (pm and pm-full both).
func Report(w io.Writer, err error) int {
	if errors.Is(err, context.Canceled) {
		return 130
	}
	code := errs.CodeOf(err)
	if code == errs.Failure && isUsage(err) {
		code = errs.Usage
	}
	// An error's text may carry what others wrote (a remote's hook output,
	// a record from another machine): its control characters are escaped.
	fmt.Fprintf(w, "pm: %s\n", render.Terminal(err.Error()))
	switch try := errs.TryOf(err); {
	case try != "":
		fmt.Fprintf(w, "Try: %s\n", render.Terminal(try))
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
