package gitx

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// chmodNoFollow sets the mode of the directory at path, never of what a
// symbolic link there names: the O_PATH descriptor's /proc/self/fd entry
// is the directory opened (glibc's fchmodat AT_SYMLINK_NOFOLLOW, as
// Linux's fchmodat has no flags).
func chmodNoFollow(path string, mode uint32) error {
	fd, err := syscall.Open(path, unix.O_PATH|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode)
}
