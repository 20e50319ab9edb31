package ops

import (
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/task"
)

// ReadContextFile reads the context a parent hands a subtask from a file,
// bounded: only a regular file is read (a device such as /dev/zero or a
// FIFO is refused, and opening one never blocks), and at most
// task.MaxContext+1 bytes are read whatever stat says, so a file that grows
// while read is refused rather than read without end.
func ReadContextFile(path string) (string, error) {
	// O_NONBLOCK: opening a FIFO with no writer would otherwise hang here.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errs.NotFoundf("write the context to a file first", "context file: %v", err)
		}
		return "", errs.Usagef("write the context to a regular file", "context file: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", errs.Usagef("write the context to a regular file", "context file %s is not a regular file (%s)", path, st.Mode().Type())
	}
	return ReadContext(f, "context file "+path)
}

// ReadContext reads a subtask's context from r (`--context-file -`: standard
// input) through the same bound, naming what it read as name.
func ReadContext(r io.Reader, name string) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, task.MaxContext+1))
	if err != nil {
		return "", err
	}
	if len(data) > task.MaxContext {
		return "", errs.Usagef("keep context under 256 KiB", "%s is over %d bytes", name, task.MaxContext)
	}
	return string(data), nil
}
