package driver

import "syscall"

// newPIDNamespace is never called on macOS (pidNamespaceWorks is false).
func newPIDNamespace(*syscall.SysProcAttr) {}

// pidNamespaceWorks: macOS has no PID namespaces; a command's tree is
// ended by its marker, which macOS cannot read either (proc.KillMarked),
// so what a command leaves running outside its process group outlives it
// there.
func pidNamespaceWorks(*syscall.SysProcAttr) bool { return false }
