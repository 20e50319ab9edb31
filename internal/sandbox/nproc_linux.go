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

// limitProcesses sets RLIMIT_NPROC from the limit nprocEnv names. In a
// user namespace of its own the kernel counts this namespace's processes,
// that is this command's, so the limit is the number itself. Outside one it
// counts every process (thread) of the user, so the limit is what the user
// runs now plus the number: the command may start that many more, fewer
// when the user's other processes grow meanwhile. Root is not held by
// RLIMIT_NPROC at all (the kernel exempts it); its agents are bounded by
// their cgroup's pids.max where there is one.
func limitProcesses() error {
	n, err := strconv.ParseUint(os.Getenv(nprocEnv), 10, 64)
	if err != nil || n == 0 {
		return nil
	}
	if !ownUserNS() {
		if os.Getuid() == 0 {
			return nil
		}
		n += userTasks(os.Getuid())
	}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
		return fmt.Errorf("RLIMIT_NPROC %d: %w", n, err)
	}
	return nil
}

// userTasks counts the tasks (threads) of the processes whose real user is
// uid, as RLIMIT_NPROC counts them.
func userTasks(uid int) uint64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var n uint64
	want := []byte(strconv.Itoa(uid))
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var real []byte
		var threads uint64
		for line := range bytes.SplitSeq(data, []byte{'\n'}) {
			if f := bytes.Fields(line); len(f) >= 2 {
				switch string(f[0]) {
				case "Uid:":
					real = f[1]
				case "Threads:":
					threads, _ = strconv.ParseUint(string(f[1]), 10, 64)
				}
			}
		}
		if bytes.Equal(real, want) {
			n += threads
		}
	}
	return n
}

// ownUserNS reports whether this process runs in a user namespace other
// than the initial one (whose uid_map maps the whole range 0 0 4294967295).
func ownUserNS() bool {
	data, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && !bytes.Equal(bytes.Join(bytes.Fields(data), []byte(" ")), []byte("0 0 4294967295"))
}
