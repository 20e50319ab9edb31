package cmdutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
)

// InteractiveTerminal reports whether r is a terminal a person answers on.
// Tests replace it.
var InteractiveTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// Confirm asks question with [y/N] on the error stream and reads the answer
// from the input: only y or yes (any case) is a yes. asked is false when the
// input is no terminal, and nothing is asked: the caller decides what a
// script without --yes gets.
func (f *Factory) Confirm(question string) (yes, asked bool) {
	if !InteractiveTerminal(f.IO.In) {
		return false, false
	}
	fmt.Fprintf(f.IO.ErrOut, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(f.IO.In).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes", true
}
