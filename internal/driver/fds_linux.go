package driver

import "golang.org/x/sys/unix"

// fdDir lists this process's open descriptors.
const fdDir = "/proc/self/fd"

// closeRangeCloexec marks every descriptor above 2 close-on-exec in one
// call (Linux 5.11); false when the kernel is older.
func closeRangeCloexec() bool {
	return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil
}
