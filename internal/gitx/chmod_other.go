//go:build !linux

package gitx

import "golang.org/x/sys/unix"

// chmodNoFollow sets the mode of the directory at path, never of what a
// symbolic link there names (fchmodat with AT_SYMLINK_NOFOLLOW, which
// these systems honour).
func chmodNoFollow(path string, mode uint32) error {
	return unix.Fchmodat(unix.AT_FDCWD, path, mode, unix.AT_SYMLINK_NOFOLLOW)
}
