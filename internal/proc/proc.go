package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// StartTime returns the start time of pid in clock ticks since boot (field 22
// of /proc/PID/stat). Together with the pid it names one process for good: a
// recycled pid gets a different start time.
func StartTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	f, err := statFields(data)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return strconv.ParseUint(string(f[19]), 10, 64)
}

// statFields returns the fields after "pid (comm)"; comm may hold spaces or
// parentheses, so split after the last ')'. f[0] is field 3 (state).
func statFields(data []byte) ([][]byte, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return nil, errors.New("unexpected format")
	}
	f := bytes.Fields(data[i+2:])
	if len(f) < 20 {
		return nil, errors.New("too few fields")
	}
	return f, nil
}

// Alive reports whether the process pid with the given start time is running.
// A zombie, a missing pid or a pid now used by another process is not alive.
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f, err := statFields(data)
	if err != nil || string(f[0]) == "Z" || string(f[0]) == "X" {
		return false
	}
	if start == 0 {
		return true
	}
	got, err := strconv.ParseUint(string(f[19]), 10, 64)
	return err == nil && got == start
}

// GroupAlive reports whether any process is left in process group pgid.
func GroupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// WaitExit blocks until the process exits or timeout passes, using a pidfd so
// the wait is woken by the kernel rather than a sleep loop. It reports whether
// the process is gone.
func WaitExit(pid int, start uint64, timeout time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return !Alive(pid, start)
	}
	defer unix.Close(fd)
	if !Alive(pid, start) {
		return true
	}
	deadline := time.Now().Add(timeout)
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			return !Alive(pid, start)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return !Alive(pid, start)
		}
		if n > 0 {
			return true
		}
	}
}

// KillGroup ends process group pgid led by pid (verified by its start time):
// SIGTERM, up to grace for the leader to exit, then SIGKILL to whatever is
// left of the group. A pid that now names another process is left alone.
func KillGroup(pid int, start uint64, grace time.Duration) (killed bool, err error) {
	if !Alive(pid, start) {
		// A pid that now names a process with another start time was
		// recycled: that process (and the group it may lead) is not ours.
		if got, err := StartTime(pid); err == nil && start != 0 && got != start {
			return false, nil
		}
		// The leader is gone; members may linger in its group. The group id
		// cannot be reused while any member lives, so signalling it is safe.
		if pid > 0 && GroupAlive(pid) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return true, nil
		}
		return false, nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, err
	}
	WaitExit(pid, start, grace)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return true, err
	}
	return true, nil
}
