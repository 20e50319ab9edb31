package capability

import (
	"os"
	"strconv"
)

// location is where the kernel says an open file is now: the link
// /proc/self/fd/N, which follows renames and cannot be raced by a swap of
// the names that led to it.
func location(f *os.File) (string, error) {
	var p string
	err := withFd(f, func(fd int) (err error) {
		p, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		return err
	})
	return p, err
}
