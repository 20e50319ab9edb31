package broker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
)

// maxSocketPath is the longest path a unix socket address holds (sun_path
// is 108 bytes with its terminating NUL).
const maxSocketPath = 107

// maxRunDir bounds the parent's path so that a socket under it fits
// maxSocketPath: "/" + pid (up to 10 digits) + "-" + start time (up to 20)
// + "-" + 32 random hex digits + "/sock" is 70 bytes.
const maxRunDir = maxSocketPath - 70

// RunDir returns the directory of this user's hosts' socket directories,
// made if missing: pm-UID in the temporary directory (os.TempDir), or in
// /tmp where that path is too long for a socket under it. It is private
// (0700, this user's, not a symlink): a directory that is not is refused,
// never used. Every sandbox hides it (its Policy.Hide), so an agent cannot
// list the sockets of other agents' hosts.
func RunDir() (string, error) {
	name := "pm-" + strconv.Itoa(os.Geteuid())
	dir := filepath.Join(os.TempDir(), name)
	if !filepath.IsAbs(dir) || len(dir) > maxRunDir {
		dir = filepath.Join("/tmp", name)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("broker: %w", err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("broker: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o077 != 0 {
		return "", errs.Failf("remove "+dir+" (or set TMPDIR to a directory of your own), then run the command again",
			"broker: %s is not a private directory of this user (0700, owned by uid %d, not a symlink)", dir, os.Geteuid())
	}
	return dir, nil
}

// socketDir makes this host's socket directory under parent: named by its
// owner (this process's pid and start time, so a sweep knows when it is
// gone, and a reused pid is never taken for it) and 128 random bits, which
// nobody who cannot list parent can guess.
func socketDir(parent string) (string, error) {
	self, _ := driver.Self()
	var b [16]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(parent, fmt.Sprintf("%d-%d-%s", self.Pid, self.PidStart, hex.EncodeToString(b[:])))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("broker: %w", err)
	}
	return dir, nil
}

// Sweep removes the socket directories under parent whose host is gone,
// whatever ended it (a host removes its own when it closes; a kill -9
// leaves it). A name it does not understand is left alone.
func Sweep(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	alive := driver.NewProcess(0).Alive
	for _, e := range ents {
		h, ok := owner(e.Name())
		if !ok || alive(h) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

// owner reads the host a socket directory's name records.
func owner(name string) (driver.Handle, bool) {
	f := strings.SplitN(name, "-", 3)
	if len(f) != 3 || len(f[2]) != 32 {
		return driver.Handle{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 || start == 0 {
		return driver.Handle{}, false
	}
	return driver.Handle{Pid: pid, PidStart: start}, true
}

// Hidden is paths and the directory of every host's socket (RunDir, its
// real path): what a sandbox's Policy.Hide must cover so that an agent
// can neither reach pm's state nor list other agents' sockets. RunDir is
// left out when it cannot be made: then no host has a socket there.
func Hidden(paths ...string) []string {
	if d, err := RunDir(); err == nil {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		paths = append(slices.Clip(paths), d) // never into the caller's array
	}
	return paths
}
