package capability

import (
	"errors"
	"io/fs"
	"os"
	"sort"

	"golang.org/x/sys/unix"
)

// errEnough stops a listing at MaxEntries.
var errEnough = errors.New("enough")

// listing collects list_files' entries by walking open directory handles:
// a subdirectory is opened relative to its parent's handle without following
// a symlink, so a swap cannot lead the walk out or into pm's state.
type listing struct {
	recursive bool
	out       []string
	more      bool
}

// walk lists dir, whose path relative to the workspace is prefix ("" or
// ending in /), in the order of a filepath.WalkDir.
func (l *listing) walk(dir *os.File, prefix string) error {
	ents, err := dir.ReadDir(-1)
	if err != nil {
		return err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if len(l.out) == MaxEntries {
			l.more = true
			return errEnough
		}
		l.out = append(l.out, entryName(prefix, e))
		if !l.recursive || !e.IsDir() || skipDirs[e.Name()] {
			continue
		}
		sub, err := openSubdir(dir, e.Name())
		if err != nil {
			continue // unreadable, or swapped for something else: skip it
		}
		err = l.walk(sub, prefix+e.Name()+"/")
		sub.Close()
		if err == errEnough {
			return err
		}
	}
	return nil
}

func entryName(prefix string, e fs.DirEntry) string {
	switch {
	case e.Type()&fs.ModeSymlink != 0:
		return prefix + e.Name() + "@"
	case e.IsDir():
		return prefix + e.Name() + "/"
	}
	return prefix + e.Name()
}

// openSubdir opens the directory name in dir, refusing a symlink.
func openSubdir(dir *os.File, name string) (*os.File, error) {
	var fd int
	err := withFd(dir, func(dfd int) (err error) {
		fd, err = unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir.Name()+"/"+name), nil
}
