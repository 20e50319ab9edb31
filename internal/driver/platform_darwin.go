package driver

import (
	"errors"
	"syscall"
)

// ErrNotOnDarwin is what the Linux-only containment calls answer on macOS.
var ErrNotOnDarwin = errors.New("not available on macOS (Linux only: subreaper, cgroups, PID namespaces)")

// BecomeSubreaper: macOS has no subreaper; a host's orphans go to launchd,
// so only their process group ends with the run.
func BecomeSubreaper() error { return ErrNotOnDarwin }

// intoCgroup: macOS has no cgroups (cgroup.Open finds none there, so this
// is never called with a group).
func intoCgroup(*syscall.SysProcAttr, int) {}

// DieWithParent: macOS has no parent-death signal; a host killed outright
// leaves its runtime running until its process group is ended (pm kill,
// the supervisor).
func DieWithParent(*syscall.SysProcAttr) {}

// NotDumpable: macOS has no PR_SET_DUMPABLE; a host's environment is as
// readable as any process's of the user (docs/security.md, "macOS").
func NotDumpable() {}

// noCgroup is how a run is contained on macOS.
const noCgroup = "process group only (macOS)"

// PlatformLimits says what containment macOS lacks (pm doctor prints it).
func PlatformLimits() string {
	return "macOS: an agent's processes are held by their process group only (no cgroups, no run marker scan, " +
		"no subreaper, no parent-death signal), so a process that leaves its group (setsid) outlives its agent; " +
		"no process limit; hosts are not hidden from the user's other processes (no PR_SET_DUMPABLE); " +
		"commands and exec agents run unconfined (no Landlock, no mount namespace)"
}
