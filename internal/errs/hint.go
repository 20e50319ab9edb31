package errs

import (
	"errors"
	"strings"
	"syscall"
)

// Hint is the Try: line for an error that carries none: what the operating
// system or a corrupt file said, turned into what a person can do. Every
// error pm prints has a Try: line; this is the last resort.
func Hint(err error) string {
	switch {
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only: run pm where .plasmodium/ is writable, or set PM_HOME to a writable state directory"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "check the permissions of the path above (ls -l), or set PM_HOME to a state directory you own"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "free some disk space, then run the command again"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "too many open files: raise the limit (ulimit -n) or stop some agents (pm agents)"
	case errors.Is(err, syscall.ENOLCK), strings.Contains(err.Error(), "lock"):
		return "a lock on the state could not be taken: check the file system supports flock (not every network file system does)"
	case strings.Contains(err.Error(), "malformed JSON"):
		return "the file named above is corrupt: fix it by hand or remove it (pm kill tk-... still stops a task's agents)"
	}
	return "pm status shows where things stand; pm log -n 20 shows what happened last"
}
