package driver

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// newPIDNamespace makes the process started with attr PID 1 of a new PID
// namespace.
func newPIDNamespace(attr *syscall.SysProcAttr) { attr.Cloneflags |= syscall.CLONE_NEWPID }

// hasPIDNamespace reports whether attr already starts its process in a new
// PID namespace (the sandbox helper's init).
func hasPIDNamespace(attr *syscall.SysProcAttr) bool {
	return attr.Cloneflags&syscall.CLONE_NEWPID != 0
}

var (
	pidNSMu     sync.Mutex
	pidNSProbed = map[uintptr]bool{} // clone flags -> a PID namespace works with them
)

// pidNamespaceWorks reports whether a child started with attr may also get
// a new PID namespace: root may make one, and so may a process in a user
// namespace of its own; whether the kernel (or a seccomp filter) allows it
// is probed once per set of clone flags, by starting `true` that way.
func pidNamespaceWorks(attr *syscall.SysProcAttr) bool {
	if os.Geteuid() != 0 && attr.Cloneflags&syscall.CLONE_NEWUSER == 0 {
		return false
	}
	pidNSMu.Lock()
	defer pidNSMu.Unlock()
	if ok, done := pidNSProbed[attr.Cloneflags]; done {
		return ok
	}
	ok := false
	if path, err := exec.LookPath("true"); err == nil {
		probe := exec.Command(path)
		a := *attr
		a.Cloneflags |= syscall.CLONE_NEWPID
		a.Setpgid, a.Setsid, a.Setctty, a.Foreground, a.Noctty = false, false, false, false, false
		a.Pdeathsig = syscall.SIGKILL
		probe.SysProcAttr = &a
		ok = probe.Run() == nil
	}
	pidNSProbed[attr.Cloneflags] = ok
	return ok
}
