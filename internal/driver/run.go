package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"

	"github.com/plasmodium/pm/internal/envlist"

	"github.com/plasmodium/pm/internal/driver/internal/cgroup"
	"github.com/plasmodium/pm/internal/driver/internal/proc"
)

// RunEnv marks every process of one run: the process driver sets
// RunEnv=<the Handle's Run> in the host's environment, which the host's
// runtime and everything they start inherit, whatever session or process
// group they move to (Claude Code runs each Bash command in its own
// session). Stop ends the marked processes with the group, and a host ends
// its own on exit (EndRun), so nothing an agent started outlives it.
const RunEnv = "PLASMODIUM_RUN"

// NprocEnv carries the process limit (config runtime.max_processes) to the
// sandbox helper of a run that has no pids controller, which sets it as
// RLIMIT_NPROC of each sandboxed command: the number itself in a user
// namespace of its own (the kernel counts that command's processes only),
// else on top of what the user runs already (the kernel counts every
// process of the user); root is not held by it (internal/sandbox reads the
// same name).
const NprocEnv = "PLASMODIUM_NPROC"

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

// EndRun, called by a host as it leaves, kills every other process of its
// run h: what is in its cgroups, what carries its marker (see RunEnv), and
// its own children, which include the orphans it became the subreaper of
// (an orphan that cleared its environment carries no marker). It does
// nothing unless this process is h's host and was started as that run
// (RunEnv in its environment is h.Run), so a host run by hand, or inside
// another agent, never ends anyone else's processes.
func EndRun(h Handle) bool {
	self := os.Getpid()
	if h.Run == "" || h.Pid != self || os.Getenv(RunEnv) != h.Run {
		return false
	}
	any := false
	if cgroup.Valid(h.Cgroup, h.Run, true) && cgroup.KillExcept(h.Cgroup, self) {
		any = true
	}
	if cgroup.Valid(h.PidsCgroup, h.Run, false) && cgroup.KillExcept(h.PidsCgroup, self) {
		any = true
	}
	if killRun(h.Run) {
		any = true
	}
	// Without a cgroup, an orphan that cleared its environment is found
	// only as the subreaper's child.
	if !Contained(h) && proc.KillChildren(self) > 0 {
		any = true
	}
	return any
}

// Contained reports whether h's run is held by a cgroup, so its host needs
// no subreaper (an orphan stays in the group wherever it is re-parented).
func Contained(h Handle) bool { return h.Cgroup != "" }

// WaitPid blocks until the process pid (verified by its start time) exits
// or ctx ends (its error then): a pidfd, so the kernel wakes it. It is how a
// waiter watches the supervisor (supervisor.Keep), a process no driver
// started.
func WaitPid(ctx context.Context, pid int, start uint64) error { return proc.Wait(ctx, pid, start) }

// LeaveRun moves this process out of the cgroups of the agent run it was
// started in (a supervisor that a host's pm command revived), into groups
// of its own: ending that run's group (cgroup.kill, which the supervisor
// itself does when it sweeps the dead run) must not end it. Best effort:
// the error says why it stays.
func LeaveRun() error {
	_, err := cgroup.Leave(newRun())
	return err
}
