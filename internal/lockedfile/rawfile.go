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

// OpenFile is os.OpenFile for a regular file of the state directory: the
// same flags, permissions and *fs.PathError, without the poller (see above).
// The *os.File reads, writes and closes as any other.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadFile is os.ReadFile for a file of the state directory, without the
// poller: the bytes are the caller's to keep.
func ReadFile(path string) ([]byte, error) { return readFile(path, make([]byte, 0, 1024)) }

// WriteFile is os.WriteFile without the poller: not atomic (WriteAtomic
// is), for caches whose readers take a cut write for a missing one.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
