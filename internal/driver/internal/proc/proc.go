package proc

import (
	"context"
	"errors"
	"syscall"
)

// GroupAlive reports whether any process is left in process group pgid.
func GroupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
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
