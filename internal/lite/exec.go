package lite

import (
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/plasmodium/pm/internal/errs"
)

// FullName is the full command line's executable, installed beside pm.
const FullName = "pm-full"

// ExecFull replaces this process with pm-full running args, argv[0] kept
// (so agents pm-full starts are started through pm again, the name the
// user and agents call). It returns only when that cannot be done.
func ExecFull(args []string, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		return Report(stderr, err)
	}
	full := filepath.Join(filepath.Dir(self), FullName)
	argv0 := "pm"
	if len(os.Args) > 0 {
		argv0 = os.Args[0]
	}
	err = syscall.Exec(full, append([]string{argv0}, args...), os.Environ())
	return Report(stderr, errs.Failf("install both: make install (or go build -o DIR/pm ./cmd/pm && go build -o DIR/pm-full ./cmd/pm-full)",
		"%s runs its other commands with %s beside it, which cannot run: %v", self, full, err))
}
