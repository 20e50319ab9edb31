package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// support is what this machine offers, probed once per process.
type support struct {
	abi     int    // Landlock ABI version; 0: none
	exe     string // this binary, re-executed as the helper
	mountNS bool   // the helper can run in a new mount namespace
	why     string // why there is no sandbox, when abi is 0
}

var (
	probeOnce sync.Once
	probed    support
)

func probe() support {
	probeOnce.Do(func() {
		abi, err := ll.LandlockGetABIVersion()
		if err != nil || abi < 1 {
			probed.why = "the kernel offers no Landlock"
			return
		}
		exe, err := os.Executable()
		if err != nil {
			probed.why = "cannot find pm's own binary: " + err.Error()
			return
		}
		probed.abi, probed.exe = abi, exe
		ns, _ := os.Readlink("/proc/self/ns/mnt")
		cmd := exec.Command(exe, helperArg, "probe", ns)
		cmd.SysProcAttr = nsAttr()
		probed.mountNS = cmd.Run() == nil
	})
	return probed
}

// ABI reports the kernel's Landlock ABI version (0: none).
func ABI() int { return probe().abi }

// Available reports the mode Command gives commands on this machine.
func Available() Mode {
	s := probe()
	switch {
	case s.abi == 0:
		return ModeNone
	case s.mountNS:
		return ModeLandlockNS
	}
	return ModeLandlock
}

// nsAttr starts the helper in a new mount namespace: as root directly, else
// in a new user namespace where the caller is mapped to root (only there
// may it mount; the capabilities are dropped before sh runs).
func nsAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWNS}
	if os.Getuid() != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// Command returns the command that runs `sh -c line` confined by p, in its
// own process group, and the mode it runs in. Without Landlock it is a
// plain sh, and Warn is told once.
func Command(ctx context.Context, p Policy, line string) (*exec.Cmd, Mode) {
	s := probe()
	if s.abi == 0 {
		warnUnconfined(s.why)
		return Unconfined(ctx, line), ModeNone
	}
	mode, attr := ModeLandlock, &syscall.SysProcAttr{Setpgid: true}
	if s.mountNS {
		p.MountNS, mode, attr = true, ModeLandlockNS, nsAttr()
		p.ParentMountNS, _ = os.Readlink("/proc/self/ns/mnt")
	}
	data, _ := json.Marshal(p) // a struct of strings and bools: cannot fail
	cmd := exec.CommandContext(ctx, s.exe, helperArg, string(data), "sh", "-c", line)
	cmd.SysProcAttr = attr
	return cmd, mode
}

// Unconfined returns a plain `sh -c line` in its own process group: what
// commands ran as before this package, and still do where config turns the
// sandbox off.
func Unconfined(ctx context.Context, line string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Wrap returns argv confined by p (the helper confines itself, then execs
// argv), the attributes its start needs, and the mode: how an exec agent's
// CLI is sandboxed (runtime.exec.sandbox). Unlike Command it keeps the
// caller's process group (an agent shares its host's). Without Landlock it
// returns argv as it is and ModeNone; the caller says so.
func Wrap(p Policy, argv []string) ([]string, *syscall.SysProcAttr, Mode) {
	s := probe()
	if s.abi == 0 {
		return argv, &syscall.SysProcAttr{}, ModeNone
	}
	mode, attr := ModeLandlock, &syscall.SysProcAttr{}
	if s.mountNS {
		p.MountNS, mode, attr = true, ModeLandlockNS, nsAttr()
		attr.Setpgid = false
		p.ParentMountNS, _ = os.Readlink("/proc/self/ns/mnt")
	}
	data, _ := json.Marshal(p) // a struct of strings and bools: cannot fail
	return append([]string{s.exe, helperArg, string(data)}, argv...), attr, mode
}

// Why names why there is no sandbox on this machine ("" when there is one).
func Why() string { return probe().why }
