package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// containArg, after initArg, makes the helper's init run a command itself,
// unconfined, in its PID namespace (Contain): no Landlock, no mounts but
// the namespace's own /proc, the user's own uid.
const containArg = "contain"

var (
	containOnce sync.Once
	containOK   bool
)

// Contained reports whether Contain gives commands a PID namespace of their
// own here (probed once per process, the way Contain starts them: through
// the spawner where a user namespace is needed, so a non-dumpable caller
// finds what it gets). It does not depend on Landlock.
func Contained() bool {
	containOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			return
		}
		t, err := exec.LookPath("true")
		if err != nil {
			return
		}
		argv, attr, err := containArgv(exe, []string{t})
		if err != nil {
			return
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		attr.Setpgid, attr.Pdeathsig = true, syscall.SIGKILL
		cmd.SysProcAttr = attr
		containOK = cmd.Run() == nil
	})
	return containOK
}

// Contain returns argv run unconfined, as the user, but as the child of the
// helper's init, PID 1 of a new PID namespace with its own /proc, and the
// attributes its start needs (Pdeathsig set: it dies with the thread that
// starts it). When that init exits (argv ended) or is killed (the process
// that started it died: its parent-death signal), the kernel kills every
// process left in the namespace, whatever session it left or environment
// it cleared: what an unsandboxed exec agent or a run_command with
// sandbox.off leaves behind does not outlive its host. As root the init is
// started in the new namespaces directly; any other user's goes through
// the spawner (a user namespace, the user mapped to root there so the
// init may mount /proc), and the command runs in a second user namespace
// nested in it that maps the user's own uid and gid back, so it runs as
// the user, holding no capability. ok is false (argv unchanged) where the
// kernel refuses those namespaces (see Contained).
func Contain(argv []string) ([]string, *syscall.SysProcAttr, bool) {
	plain := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if len(argv) == 0 || !Contained() {
		return argv, plain, false
	}
	exe, err := os.Executable()
	if err != nil {
		return argv, plain, false
	}
	full, attr, err := containArgv(exe, argv)
	if err != nil {
		return argv, plain, false
	}
	attr.Pdeathsig = syscall.SIGKILL
	return full, attr, true
}

// containArgv is the command line that runs argv under the helper's init
// in a new PID (and mount) namespace, with the caller's uid, gid and mount
// namespace for the init to check against.
func containArgv(exe string, argv []string) ([]string, *syscall.SysProcAttr, error) {
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return nil, nil, err
	}
	args := append([]string{containArg, ns, strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())}, argv...)
	full, attr := helperArgv(exe, true, args)
	return full, attr, nil
}

// containCommand is the init's child for Contain's args (the caller's mount
// namespace, uid, gid, then argv): it mounts the namespace's /proc (in a
// mount namespace of its own, never the caller's) and returns argv to
// start, in a user namespace that maps the caller's uid and gid back when
// the init runs as root of a user namespace the caller is not root in.
func containCommand(args []string) (*exec.Cmd, error) {
	if len(args) < 4 {
		return nil, fmt.Errorf("contain: no command")
	}
	uid, err := strconv.Atoi(args[1])
	if err != nil {
		return nil, fmt.Errorf("contain: bad uid %q", args[1])
	}
	gid, err := strconv.Atoi(args[2])
	if err != nil {
		return nil, fmt.Errorf("contain: bad gid %q", args[2])
	}
	if !ownMountNS(args[0]) {
		return nil, fmt.Errorf("contain: not in a mount namespace of its own: refusing to mount")
	}
	if err := privateMounts(); err != nil {
		return nil, fmt.Errorf("contain: private mounts: %w", err)
	}
	if err := mountProc(); err != nil {
		return nil, fmt.Errorf("contain: %w", err)
	}
	argv := args[3:]
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	if os.Getuid() != uid || os.Getgid() != gid {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:                 syscall.CLONE_NEWUSER,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: os.Getuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: os.Getgid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
		}
	}
	return cmd, nil
}
