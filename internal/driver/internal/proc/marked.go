package proc

import (
	"bytes"
	"os"
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
	for range 16 {
		found := 0
		for _, pid := range pids() {
			if pid == self || killed[pid] || !hasEnv(pid, want) {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed[pid] = true
			found++
		}
		if found == 0 {
			break
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

// hasEnv reports whether pid's environment holds entry exactly.
func hasEnv(pid int, entry []byte) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if bytes.Equal(kv, entry) {
			return true
		}
	}
	return false
}
