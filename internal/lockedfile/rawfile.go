package lockedfile

import (
	"io/fs"
	"os"
	"syscall"
)

// The files of the state directory are regular files, which the runtime's
// poller cannot wait on; os.Open tries anyway (fcntl twice, a failing
// epoll_ctl, fcntl twice again) and its first call sets the poller up (an
// epoll instance, an eventfd, a thread to wait on them). A short command
// opens a dozen files and polls none, so the state's own files are opened
// here, with the bare system calls (docs/benchmarks.md, "The rest of a
// say").

// readFile reads path into buf (reused, grown as needed) and returns the
// filled slice. It is os.ReadFile for the small JSON records pm reads by the
// thousand (pm status reads every task.json): os.Open makes a regular file
// pollable (fcntl twice, a failing epoll_ctl, fcntl twice again) and
// os.ReadFile adds an fstat; here it is open, read until EOF, close. Errors
// are *fs.PathError wrapping the errno, as from os.ReadFile, so os.IsNotExist
// and errors.Is(err, fs.ErrNotExist) behave the same.
func readFile(path string, buf []byte) ([]byte, error) {
	fd, err := openFD(path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
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

// OpenFile is os.OpenFile for a regular file of the state directory: the
// same flags, permissions and *fs.PathError, without the poller (see above).
// The *os.File reads, writes and closes as any other.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := openFD(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openFD opens path with the bare system call (O_CLOEXEC added, EINTR
// retried); an error is os.OpenFile's *fs.PathError.
func openFD(path string, flag int, perm os.FileMode) (int, error) {
	fd, err := retryEINTR(func() (int, error) { return syscall.Open(path, flag|syscall.O_CLOEXEC, uint32(perm.Perm())) })
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// ReadFile is os.ReadFile for a file of the state directory, without the
// poller: the bytes are the caller's to keep.
func ReadFile(path string) ([]byte, error) { return readFile(path, make([]byte, 0, 1024)) }
