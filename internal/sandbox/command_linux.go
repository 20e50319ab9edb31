package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// support is what this machine offers, probed once per process.
type support struct {
	abi     int    // Landlock ABI version; 0: none
	exe     string // this binary, re-executed as the helper
	mountNS bool   // the helper can run in a new mount namespace
	pidNS   bool   // ... and in a new PID namespace, under initArg
	why     string // why there is no sandbox, when abi is 0
	nsWhy   string // why there is no mount namespace, when mountNS is false
}

var (
	probeOnce sync.Once
	probed    support
	// userNS is whether the helper needs a user namespace to mount: every
	// user but root. A variable so the tests run that path as root too.
	userNS = os.Getuid() != 0
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
		probed.mountNS, probed.nsWhy = probeMountNS(exe, true)
		probed.pidNS = probed.mountNS
		if !probed.mountNS {
			// A kernel or seccomp filter may refuse PID namespaces alone.
			if ok, _ := probeMountNS(exe, false); ok {
				probed.mountNS, probed.nsWhy = true, ""
			}
		}
	})
	return probed
}

// probeMountNS starts the helper exactly as Command will (through the
// spawner when a user namespace is needed) and asks it whether it is in a
// mount namespace of its own where it may mount; when not, why.
func probeMountNS(exe string, pidNS bool) (bool, string) {
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return false, "cannot read this process's mount namespace: " + err.Error()
	}
	args := []string{"probe", ns}
	if pidNS {
		args = append(args, probeProcArg)
	}
	argv, attr := helperArgv(exe, pidNS, args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = attr
	attr.Setpgid = true
	out, err := cmd.CombinedOutput()
	if err == nil {
		return true, ""
	}
	why := strings.TrimSpace(string(out))
	if why == "" {
		why = err.Error()
	}
	return false, why
}

// probeProcArg asks the probe to mount a /proc of its PID namespace too.
const probeProcArg = "proc"

// helperArgv is the command line and process attributes that run the
// helper with args in a new mount namespace. As root the helper is started
// in one directly. Any other user needs a user namespace, and the process
// that writes the new namespace's uid_map must be able to open the child's
// /proc files: a non-dumpable process (pm supervise and pm agent-run are,
// to keep their environment from other processes of the user) cannot, as
// its forked child is non-dumpable until it execs. So the helper is started
// plainly as a spawner (dumpable, being freshly executed), which starts the
// helper proper in the new namespaces and waits for it (spawn).
//
// With pidNS the namespaces include a new PID namespace whose PID 1 is the
// helper's init (nsInit), which starts the helper proper: when it exits or
// dies with its parent, the kernel ends every process left in the
// namespace, whatever session it left or environment it cleared.
func helperArgv(exe string, pidNS bool, args []string) ([]string, *syscall.SysProcAttr) {
	if pidNS {
		args = append([]string{initArg}, args...)
	}
	if userNS {
		return append([]string{exe, helperArg, spawnArg}, args...), &syscall.SysProcAttr{}
	}
	attr := nsAttr(false)
	if pidNS {
		attr.Cloneflags |= syscall.CLONE_NEWPID
	}
	return append([]string{exe, helperArg}, args...), attr
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

// PIDNamespace reports whether confined commands run in a PID namespace of
// their own (under the helper's init), so nothing they start outlives them.
func PIDNamespace() bool { return probe().pidNS }

// NoMountNS says why commands get no mount namespace here ("" when they do,
// or when there is no Landlock at all: Why says that).
func NoMountNS() string { return probe().nsWhy }

// nsAttr starts a process in a new mount namespace, and with user in a new
// user namespace too, where the caller is mapped to root (only there may an
// ordinary user mount; the capabilities are dropped before sh runs).
func nsAttr(user bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if user {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// confined is the argv and attributes that run argv confined by p.
func confined(s support, p Policy, argv []string) ([]string, *syscall.SysProcAttr, Mode) {
	if !s.mountNS {
		data, _ := json.Marshal(p) // a struct of strings and bools: cannot fail
		return append([]string{s.exe, helperArg, string(data)}, argv...), &syscall.SysProcAttr{}, ModeLandlock
	}
	p.MountNS, p.PIDNS = true, s.pidNS
	p.ParentMountNS, _ = os.Readlink("/proc/self/ns/mnt")
	data, _ := json.Marshal(p)
	full, attr := helperArgv(s.exe, s.pidNS, append([]string{string(data)}, argv...))
	return full, attr, ModeLandlockNS
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
	argv, attr, mode := confined(s, p, []string{"sh", "-c", line})
	// The spawner or the init dies with the thread that starts it, and
	// the namespace with it: a killed host leaves nothing running.
	attr.Setpgid, attr.Pdeathsig = true, syscall.SIGKILL
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = attr
	return cmd, mode
}

// Unconfined returns `sh -c line` unconfined, as the user, in its own
// process group: what commands ran as before this package, and still do
// where config turns the sandbox off. Where the kernel allows it, it runs
// in a PID namespace of its own (Contain), so nothing it starts outlives
// it or the process that started it.
func Unconfined(ctx context.Context, line string) *exec.Cmd {
	argv, attr, _ := Contain([]string{"sh", "-c", line})
	attr.Setpgid = true
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = attr
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
	return confined(s, p, argv)
}

// Why names why there is no sandbox on this machine ("" when there is one).
func Why() string { return probe().why }
