package driver

import "syscall"

// newPIDNamespace is never called on macOS (pidNamespaceWorks is false).
func newPIDNamespace(*syscall.SysProcAttr) {}

// hasPIDNamespace: no PID namespaces on macOS.
func hasPIDNamespace(*syscall.SysProcAttr) bool { return false }

// pidNamespaceWorks: macOS has no PID namespaces; a command's tree is
// ended by its marker, which macOS cannot read either (proc.KillMarked),
// so what a command leaves running outside its process group outlives it
// there.
func pidNamespaceWorks(*syscall.SysProcAttr) bool { return false }
