package wire

import "syscall"

// unixSocket is a non-blocking, close-on-exec unix stream socket, made so
// in one call.
func unixSocket() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
}
