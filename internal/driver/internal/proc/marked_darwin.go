package proc

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// KillMarked would end every process whose environment holds entry; macOS
// has no /proc and shows another process's environment only to root
// (KERN_PROCARGS2), so it finds none and returns 0: on macOS a run's
// processes are ended by their process group and their host's end, and a
// process that left its group (setsid) is not caught (pm doctor says so).
func KillMarked(entry string) int { return 0 }

// KillChildren SIGKILLs every live child of process parent, again until it
// has none, and returns how many it killed. Zombies are left to their reaper.
func KillChildren(parent int) int {
	killed := map[int]bool{}
	for range 100 {
		found := 0
		all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
		if err != nil {
			break
		}
		for _, kp := range all {
			pid := int(kp.Proc.P_pid)
			if killed[pid] || pid == parent || int(kp.Eproc.Ppid) != parent || kp.Proc.P_stat == szomb {
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
