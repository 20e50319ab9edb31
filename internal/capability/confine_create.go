package capability

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/plasmodium/pm/internal/errs"
)

// withFd runs fn with f's descriptor without putting f in blocking mode.
func withFd(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// openDir opens the directory rel for listing (write false) or for creating
// in it (write true, making missing directories on the way). Each directory
// is made relative to the admitted handle of its parent, never by a name
// looked up again, so a swapped symlink cannot steer a mkdir elsewhere.
func (b *confinement) openDir(rel, given string, write bool) (*os.File, error) {
	root, err := os.OpenRoot(b.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if rel == "" {
		rel = "."
	}
	// The usual case, a directory that exists: one open.
	if f, err := root.Open(rel); err == nil || !write || !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return nil, b.dirError(err, rel, given)
		}
		return b.admitDir(f, given, write)
	}
	cur, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	done := "."
	for _, name := range strings.Split(rel, "/") {
		if name == "" || name == "." {
			continue
		}
		next := path.Join(done, name)
		f, err := root.Open(next)
		if errors.Is(err, fs.ErrNotExist) && write {
			err = withFd(cur, func(fd int) error { return unix.Mkdirat(fd, name, 0o755) })
			if err == nil || errors.Is(err, fs.ErrExist) {
				f, err = root.Open(next)
			}
		}
		cur.Close()
		if err != nil {
			return nil, b.dirError(err, next, given)
		}
		if cur, err = b.admitDir(f, given, write); err != nil {
			return nil, err
		}
		done = next
	}
	return b.admitDir(cur, given, write)
}

// dirError turns an error opening the directory rel into what the model reads.
func (b *confinement) dirError(err error, rel, given string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.NotFoundf("list the workspace with list_files and no path", "no directory %s", rel)
	case errors.Is(err, syscall.ENOTDIR):
		return errs.Usagef("", "%s is a file, not a directory", rel)
	}
	return b.openError(err, rel, given)
}

// admitDir admits an open directory (closing it on refusal).
func (b *confinement) admitDir(f *os.File, given string, write bool) (*os.File, error) {
	st, err := b.admit(f, given, write)
	if err == nil && !st.IsDir() {
		err = errs.Usagef("use read_file for files", "%s is a file, not a directory", given)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// create makes the file rel that did not exist: its directory is opened
// (and made) by openDir, then the file is created relative to that handle,
// exclusively and without following a symlink.
func (b *confinement) create(rel, given string, flag int) (*os.File, fs.FileInfo, error) {
	dir, name := path.Split(rel)
	d, err := b.openDir(strings.TrimSuffix(dir, "/"), given, true)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	var fd int
	err = withFd(d, func(dfd int) (err error) {
		fd, err = unix.Openat(dfd, name, flag|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		return nil, nil, errs.Usagef("", "%q appeared while it was being created (or is a dangling symlink); try again", given)
	}
	if err != nil {
		return nil, nil, b.openError(err, rel, given)
	}
	f := os.NewFile(uintptr(fd), path.Join(b.root, rel))
	st, err := b.admit(f, given, true)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}
