package proc

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// KillMarked sends SIGKILL to every process (but this one) whose environment
// holds entry ("NAME=VALUE", matched whole), and returns how many it found.
// A marked process that forks while the scan runs is caught by the next
// pass; passes stop when one finds nobody new. Processes whose environment
// this user cannot read are not ours and are skipped.
func KillMarked(entry string) int {
	if entry == "" {
		return 0
	}
	want := []byte(entry)
	self := os.Getpid()
	killed := map[int]bool{}
	for unsureLeft := 3; ; {
		found, unsure := 0, 0
		for _, pid := range pids() {
			if pid == self || killed[pid] {
				continue
			}
			switch hasEnv(pid, want) {
			case envMatch:
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed[pid] = true
				found++
			case envUnsure:
				unsure++
			}
		}
		// A process caught inside execve shows an empty environment for a
		// moment: look again a few times before calling the run clean.
		if found == 0 && (unsure == 0 || unsureLeft == 0) {
			break
		}
		if found == 0 {
			unsureLeft--
		}
	}
	return len(killed)
}

// pids lists the processes in /proc.
func pids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 1 {
			out = append(out, pid)
		}
	}
	return out
}

type envAnswer int

const (
	envNo     envAnswer = iota
	envMatch            // the environment holds the entry
	envUnsure           // a user process showing no environment (mid-exec?)
)

// hasEnv tells whether pid's environment holds entry exactly. An empty one
// is unsure for a user process (it may be inside execve), and a plain no for
// a kernel thread or a zombie (no executable).
func hasEnv(pid int, entry []byte) envAnswer {
	dir := "/proc/" + strconv.Itoa(pid)
	data, err := os.ReadFile(dir + "/environ")
	for range 100 {
		if err != nil || len(data) > 0 {
			break
		}
		runtime.Gosched() // maybe inside execve: its new environment is moments away
		data, err = os.ReadFile(dir + "/environ")
	}
	if err != nil {
		return envNo
	}
	if len(data) == 0 {
		if _, err := os.Readlink(dir + "/exe"); err == nil {
			return envUnsure
		}
		return envNo
	}
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if bytes.Equal(kv, entry) {
			return envMatch
		}
	}
	return envNo
}

// KillChildren SIGKILLs every live child of process parent, again until it
// has none (a killed child's own children are re-parented to parent when it
// is their subreaper), and returns how many it killed. Zombies are left to
// their reaper.
func KillChildren(parent int) int {
	killed := map[int]bool{}
	for range 100 {
		found := 0
		for _, pid := range pids() {
			if killed[pid] || pid == parent {
				continue
			}
			if pp, live := parentOf(pid); live && pp == parent {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed[pid] = true
				found++
			}
		}
		if found == 0 {
			break
		}
	}
	return len(killed)
}

// parentOf returns pid's parent and whether pid is live (not a zombie).
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	f, err := statFields(data)
	if err != nil || string(f[0]) == "Z" || string(f[0]) == "X" {
		return 0, false
	}
	pp, err := strconv.Atoi(string(f[1]))
	return pp, err == nil
}
