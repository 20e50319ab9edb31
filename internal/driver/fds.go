package driver

import (
	"os"
	"strconv"
	"syscall"
)

// NoInherit marks every descriptor of this process above 2 close-on-exec,
// so nothing pm spawns inherits one that pm's own caller left open (a shell's
// `3>&1`: the pipe would stay open in the supervisor, the host and its
// runtime, and its reader would never see its end). Go opens its own files
// close-on-exec already; what a spawn is meant to get (Stdin, Stdout,
// Stderr, ExtraFiles) is dup'ed into the child whatever the flag. Every
// spawn calls it first; it is idempotent and cheap.
func NoInherit() {
	if closeRangeCloexec() {
		return
	}
	// Kernels before 5.11, and macOS: flag each open descriptor in turn.
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
