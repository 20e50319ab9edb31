package lite

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
)

// An error's text can carry what others wrote (a git remote's hook output,
// a record another machine wrote): Report prints it with its control
// characters escaped, never raw to the human's terminal.
func TestReportEscapesControlCharacters(t *testing.T) {
	for _, err := range []error{
		errors.New("git push origin: remote: \x1b]0;owned\x07 rejected"),
		errs.Failf("check \x1b[2Jthe remote", "git fetch: \x1b[31mred\x1b[0m"),
	} {
		var b bytes.Buffer
		Report(&b, err)
		if strings.ContainsAny(b.String(), "\x1b\x07") {
			t.Errorf("Report printed a control character raw: %q", b.String())
		}
	}
}
