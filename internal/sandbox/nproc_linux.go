package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// nprocEnv is driver.NprocEnv (the sandbox does not link the driver): the
// process limit of an agent that has no pids controller.
const nprocEnv = "PLASMODIUM_NPROC"

// limitProcesses sets RLIMIT_NPROC to the limit nprocEnv names, when this
// helper runs in a user namespace of its own: there the kernel counts the
// processes of this namespace's user, that is this command's, against it.
// Outside one it would count every process of the user, and is left alone.
func limitProcesses() error {
	n, err := strconv.ParseUint(os.Getenv(nprocEnv), 10, 64)
	if err != nil || n == 0 || !ownUserNS() {
		return nil
	}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
		return fmt.Errorf("RLIMIT_NPROC %d: %w", n, err)
	}
	return nil
}

// ownUserNS reports whether this process runs in a user namespace other
// than the initial one (whose uid_map maps the whole range 0 0 4294967295).
func ownUserNS() bool {
	data, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && !bytes.Equal(bytes.Join(bytes.Fields(data), []byte(" ")), []byte("0 0 4294967295"))
}
