package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"

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

// Wait blocks until the process pid (verified by its start time) exits or
// ctx ends, returning ctx's error then. It polls a pidfd, so the kernel wakes
// it (no sleep loop), and it works for any process, not only our children. A
// pid that is gone or recycled counts as exited.
func Wait(ctx context.Context, pid int, start uint64) error {
	if pid <= 0 {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) || !Alive(pid, start) {
			return nil
		}
		return err // out of file descriptors, say: the process still runs
	}
	defer unix.Close(fd)
	if !Alive(pid, start) {
		return nil
	}
	return pollExit(ctx, fd)
}

// pollExit waits for pidfd to turn readable (its process exited) or ctx to
// end. ctx's end closes the write end of a pipe polled alongside, so both
// wake-ups come from the kernel.
func pollExit(ctx context.Context, pidfd int) error {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	defer unix.Close(p[0])
	var once sync.Once
	closeWrite := func() { once.Do(func() { unix.Close(p[1]) }) }
	stop := context.AfterFunc(ctx, closeWrite)
	defer func() { stop(); closeWrite() }()
	for {
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		_, err := unix.Poll(fds, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case fds[0].Revents != 0:
			return nil
		case fds[1].Revents != 0:
			return ctx.Err()
		}
	}
}

// Signal sends sig to the process pid alone, only while its start time still
// matches (a recycled pid is left alone and reported gone).
func Signal(pid int, start uint64, sig syscall.Signal) error {
	if err := verifiable(pid, start); err != nil {
		return err
	}
	if !Alive(pid, start) {
		return ErrGone
	}
	if err := syscall.Kill(pid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return ErrGone
		}
		return err
	}
	return nil
}

// ErrGone: the process has exited, or its pid now names another process.
var ErrGone = errors.New("process is gone")

// ErrUnverified: the record names no process pm can verify as its own (no
// start time, or pid 0 or 1), so nothing is signalled.
var ErrUnverified = errors.New("refusing to signal a process without a verifiable pid and start time")

// verifiable refuses a pid that would signal every process (-1 from pid 1),
// init or a negative group, and a record without a start time, which would
// match whatever process now has the pid. Pid 0 is no process at all (an
// agent never started): ErrGone, and never our own group.
func verifiable(pid int, start uint64) error {
	switch {
	case pid == 0:
		return ErrGone
	case pid < 0 || pid == 1 || start == 0:
		return ErrUnverified
	}
	return nil
}

// StopGroup ends process group pgid led by pid (verified by its start time):
// SIGTERM, then until ctx ends for the leader to exit, then SIGKILL to
// whatever is left of the group. A pid that now names another process is left
// alone. A leader already gone means no grace: lingering members are killed
// at once.
func StopGroup(ctx context.Context, pid int, start uint64) (killed bool, err error) {
	if err := verifiable(pid, start); err != nil {
		if errors.Is(err, ErrGone) {
			return false, nil // nothing was ever started: nothing to stop
		}
		return false, err
	}
	if !Alive(pid, start) {
		// A pid that now names a process with another start time was
		// recycled: that process (and the group it may lead) is not ours.
		if got, err := StartTime(pid); err == nil && got != start {
			return false, nil
		}
		// The leader is gone; members may linger in its group. The group id
		// cannot be reused while any member lives, so signalling it is safe.
		if GroupAlive(pid) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return true, nil
		}
		return false, nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, err
	}
	_ = Wait(ctx, pid, start)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return true, err
	}
	return true, nil
}
