package testproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SelfPID is a shell expression for "the shell's PID namespace and pid",
// which OuterPIDs turns into pids as a test sees them: a sandboxed command
// runs in a PID namespace of its own (with its own /proc), where $$ and
// /proc/self are not the test's pids.
const SelfPID = `"$(readlink /proc/self/ns/pid) $$"`

// OuterPIDs reads lines of a PID namespace (readlink /proc/self/ns/pid)
// followed by pids in it, and returns those processes' pids in this
// process's namespace. A process that has already ended is an error.
func OuterPIDs(text string) ([]int, error) {
	var out []int
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "pid:[") {
			return nil, fmt.Errorf("line %q is not `NAMESPACE PID...`", line)
		}
		for _, inner := range f[1:] {
			pid, err := outerPID(f[0], inner)
			if err != nil {
				return nil, err
			}
			out = append(out, pid)
		}
	}
	return out, nil
}

// outerPID finds the process that is pid inner in namespace ns: its
// NSpid line lists its pid in every namespace from /proc's down to its
// own (the first is this side's, the last ns's).
func outerPID(ns, inner string) (int, error) {
	if own, _ := os.Readlink("/proc/self/ns/pid"); own == ns {
		return strconv.Atoi(inner)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if link, _ := os.Readlink("/proc/" + e.Name() + "/ns/pid"); link != ns {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "NSpid:" && f[len(f)-1] == inner {
				return strconv.Atoi(f[1])
			}
		}
	}
	return 0, fmt.Errorf("no process is pid %s in %s", inner, ns)
}
