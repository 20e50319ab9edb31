package driver

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling host the parent of whatever its
// descendants orphan (PR_SET_CHILD_SUBREAPER), instead of PID 1: a detached
// child stays under the host while the host lives. Orphans that exit stay
// zombies until the host does (the host cannot tell them from the children
// os/exec waits for, so it reaps none; pm counts a zombie as gone).
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// intoCgroup makes the process started with attr start in the cgroup open
// at fd (clone3's CLONE_INTO_CGROUP).
func intoCgroup(attr *syscall.SysProcAttr, fd int) {
	attr.UseCgroupFD, attr.CgroupFD = true, fd
}

// DieWithParent makes the process started with attr get SIGKILL when the
// thread that started it dies (Pdeathsig): a host's runtime does not
// outlive the host.
func DieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// NotDumpable keeps other processes of the same user (an agent's
// commands) from reading this one's memory and /proc/PID/environ, where a
// host and the supervisor hold the provider key (PR_SET_DUMPABLE 0).
func NotDumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// noCgroup is how a run without a cgroup of its own is contained.
const noCgroup = "run marker + subreaper"

// PlatformLimits says what containment this OS lacks; "" on Linux, where
// pm has all of it (pm doctor prints it).
func PlatformLimits() string { return "" }
