package proc

import (
	"context"
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// szomb is a zombie's p_stat (sys/proc.h).
const szomb = 5

// StartTime returns the start time of pid in microseconds since the epoch
// (kern.proc.pid's p_starttime). Together with the pid it names one process
// for good: a recycled pid gets a different start time.
func StartTime(pid int) (uint64, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if kp.Proc.P_pid != int32(pid) {
		return 0, unix.ESRCH // the kernel answers an empty record for a pid that is gone
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1e6 + uint64(t.Usec), nil
}

// Alive reports whether the process pid with the given start time is running.
// A zombie, a missing pid or a pid now used by another process is not alive.
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) || kp.Proc.P_stat == szomb {
		return false
	}
	if start == 0 {
		return true
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1e6+uint64(t.Usec) == start
}

// Wait blocks until the process pid (verified by its start time) exits or
// ctx ends, returning ctx's error then. A kqueue watches the process
// (EVFILT_PROC, NOTE_EXIT) and a pipe closed by ctx's end, so both
// wake-ups come from the kernel. A pid that is gone or recycled counts as
// exited.
func Wait(ctx context.Context, pid int, start uint64) error {
	if pid <= 0 || !Alive(pid, start) {
		return nil
	}
	kq, err := unix.Kqueue()
	if err != nil {
		return err
	}
	defer unix.Close(kq)
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return err
	}
	defer unix.Close(p[0])
	var once sync.Once
	closeWrite := func() { once.Do(func() { unix.Close(p[1]) }) }
	stop := context.AfterFunc(ctx, closeWrite)
	defer func() { stop(); closeWrite() }()
	changes := make([]unix.Kevent_t, 2)
	unix.SetKevent(&changes[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	changes[0].Fflags = unix.NOTE_EXIT
	unix.SetKevent(&changes[1], p[0], unix.EVFILT_READ, unix.EV_ADD)
	if _, err := unix.Kevent(kq, changes, nil, nil); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // exited between the check and the watch
		}
		return err
	}
	if !Alive(pid, start) {
		return nil
	}
	events := make([]unix.Kevent_t, 2)
	for {
		n, err := unix.Kevent(kq, nil, events, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			if ev.Filter == unix.EVFILT_PROC {
				return nil
			}
		}
		if n > 0 {
			return ctx.Err()
		}
	}
}
