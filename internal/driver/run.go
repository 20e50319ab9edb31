package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"

	"github.com/plasmodium/pm/internal/envlist"

	"github.com/plasmodium/pm/internal/driver/internal/proc"
	"golang.org/x/sys/unix"
)

// RunEnv marks every process of one run: the process driver sets
// RunEnv=<the Handle's Run> in the host's environment, which the host's
// runtime and everything they start inherit, whatever session or process
// group they move to (Claude Code runs each Bash command in its own
// session). Stop ends the marked processes with the group, and a host ends
// its own on exit (EndRun), so nothing an agent started outlives it.
const RunEnv = "PLASMODIUM_RUN"

// newRun returns a fresh run token.
func newRun() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withRun is env with RunEnv set to run (an inherited one replaced).
func withRun(env []string, run string) []string { return envlist.Set(env, RunEnv, run) }

// killRun SIGKILLs every process marked with run; it reports whether any was.
func killRun(run string) bool {
	return run != "" && proc.KillMarked(RunEnv+"="+run) > 0
}

// BecomeSubreaper makes the calling host the parent of whatever its
// descendants orphan (PR_SET_CHILD_SUBREAPER), instead of PID 1: a detached
// child stays under the host while the host lives. Orphans that exit stay
// zombies until the host does (the host cannot tell them from the children
// os/exec waits for, so it reaps none; pm counts a zombie as gone).
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// EndRun, called by a host as it leaves, kills every other process of its
// run h (see RunEnv). It does nothing unless this process is h's host and
// was started as that run (RunEnv in its environment is h.Run), so a host
// run by hand, or inside another agent, never ends anyone else's processes.
func EndRun(h Handle) bool {
	if h.Run == "" || h.Pid != os.Getpid() || os.Getenv(RunEnv) != h.Run {
		return false
	}
	return killRun(h.Run)
}

// WaitPid blocks until the process pid (verified by its start time) exits
// or ctx ends (its error then): a pidfd, so the kernel wakes it. It is how a
// waiter watches the supervisor (supervisor.Keep), a process no driver
// started.
func WaitPid(ctx context.Context, pid int, start uint64) error { return proc.Wait(ctx, pid, start) }
