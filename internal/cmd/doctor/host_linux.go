package doctor

import (
	"os"
	"os/user"
	"strconv"

	"golang.org/x/sys/unix"
)

// asHost makes this process non-dumpable, as pm supervise and pm agent-run
// are, before the sandbox is probed: what the probe finds is then what
// pm's agent hosts find (a non-dumpable process once could not map its
// user into a new user namespace).
func asHost() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// kernel is the kernel's name and release.
func kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "unknown kernel"
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}

// user names who pm runs as.
func whoami() string {
	uid := os.Getuid()
	name := strconv.Itoa(uid)
	if u, err := lookupUser(uid); err == nil {
		name = u + " (uid " + name + ")"
	}
	return name
}

func lookupUser(uid int) (string, error) {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return "", err
	}
	return u.Username, nil
}
