package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

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
