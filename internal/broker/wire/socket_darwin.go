package wire

import "syscall"

// unixSocket is a non-blocking, close-on-exec unix stream socket. macOS
// has no SOCK_CLOEXEC: the flag is set right after, under the fork lock,
// so no process started meanwhile inherits the descriptor.
func unixSocket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}
