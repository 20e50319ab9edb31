package errs

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func TestHint(t *testing.T) {
	path := func(e error) error { return &fs.PathError{Op: "open", Path: "/x/.plasmodium/tasks.lock", Err: e} }
	cases := []struct {
		err  error
		want string
	}{
		{path(syscall.EROFS), "read-only"},
		{path(syscall.EACCES), "permissions"},
		{path(syscall.ENOSPC), "disk space"},
		{path(syscall.ENOLCK), "flock"},
		{errors.New("/x/task.json:2: malformed JSON: unexpected end"), "corrupt"},
		{errors.New("something else"), "pm status"},
	}
	for _, c := range cases {
		if got := Hint(c.err); !strings.Contains(got, c.want) {
			t.Errorf("Hint(%v) = %q, want it to mention %q", c.err, got, c.want)
		}
	}
}
