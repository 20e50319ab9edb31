//go:build !linux

package sandbox

import (
	"context"
	"os/exec"
	"syscall"
)

// ABI reports the kernel's Landlock ABI version: none here.
func ABI() int { return 0 }

// Available reports the mode Command gives commands: none off Linux.
func Available() Mode { return ModeNone }

// PIDNamespace reports whether confined commands run in a PID namespace of
// their own: not off Linux.
func PIDNamespace() bool { return false }

// Command runs `sh -c line` unconfined: Landlock is Linux only.
func Command(ctx context.Context, p Policy, line string) (*exec.Cmd, Mode) {
	warnUnconfined("Landlock is Linux only")
	return Unconfined(ctx, line), ModeNone
}

// Unconfined returns a plain `sh -c line` in its own process group.
func Unconfined(ctx context.Context, line string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Contained reports whether Contain gives commands a PID namespace of their
// own: not off Linux.
func Contained() bool { return false }

// Contain returns argv as it is: PID namespaces are Linux only.
func Contain(argv []string) ([]string, *syscall.SysProcAttr, bool) {
	return argv, &syscall.SysProcAttr{}, false
}

// Wrap returns argv unconfined: Landlock is Linux only.
func Wrap(p Policy, argv []string) ([]string, *syscall.SysProcAttr, Mode) {
	return argv, &syscall.SysProcAttr{}, ModeNone
}

// Why names why there is no sandbox here.
func Why() string { return "Landlock is Linux only" }

// NoMountNS says why commands get no mount namespace: none off Linux.
func NoMountNS() string { return "mount namespaces are Linux only" }
