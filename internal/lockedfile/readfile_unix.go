//go:build unix

package lockedfile

import (
	"io/fs"
	"syscall"
)

// readFile reads path into buf (reused, grown as needed) and returns the
// filled slice. It is os.ReadFile for the small JSON records pm reads by the
// thousand (pm status reads every task.json): os.Open makes a regular file
// pollable (fcntl twice, a failing epoll_ctl, fcntl twice again) and
// os.ReadFile adds an fstat; here it is open, read until EOF, close. Errors
// are *fs.PathError wrapping the errno, as from os.ReadFile, so os.IsNotExist
// and errors.Is(err, fs.ErrNotExist) behave the same.
func readFile(path string, buf []byte) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	data := buf[:0]
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := syscall.Read(fd, data[len(data):cap(data)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return data, nil
		}
		data = data[:len(data)+n]
	}
}
