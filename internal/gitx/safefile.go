package gitx

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// openRegular opens name for reading only if it is a regular file. The work
// tree and, for an agent that could write it, .git hold whatever was put
// there: the open is non-blocking, so a FIFO planted where a .gitignore, an
// exclude file, a gitdir: file or a tracked file was expected cannot hang pm
// done, and anything but a regular file is refused on the open handle.
func openRegular(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("gitx: %s is not a regular file", name)
	}
	return f, nil
}

// readSmallFile reads the regular file name, refusing one over max bytes.
func readSmallFile(name string, max int64) ([]byte, error) {
	f, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("gitx: %s is over %d bytes", name, max)
	}
	return b, nil
}
