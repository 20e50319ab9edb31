package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// init turns any binary linking this package into the helper when it is
// started with helperArg: the policy is applied to this process, which then
// becomes sh. It never returns in the helper.
func init() {
	if len(os.Args) < 2 || os.Args[1] != helperArg {
		return
	}
	// The capability drop and the exec must happen on one thread.
	runtime.LockOSThread()
	os.Exit(helperMain(os.Args[2:]))
}

// helperMain confines this process and execs argv; it returns an exit code
// only when that fails: 126 when the confinement failed, 127 when the
// command was not found.
func helperMain(args []string) int {
	if len(args) == 2 && args[0] == "probe" {
		if !ownMountNS(args[1]) || privateMounts() != nil {
			return 1
		}
		return 0
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "pm sandbox: no policy or no command")
		return 126
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: bad policy: %v\n", err)
		return 126
	}
	if err := confine(p); err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: %v; the command did not run\n", err)
		return 126
	}
	argv := args[1:]
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: %v\n", err)
		return 127
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "pm sandbox: exec %s: %v\n", path, err)
	return 126
}

// confine hides the state (in a mount namespace), restricts this process
// with Landlock and drops its capabilities.
func confine(p Policy) error {
	if p.MountNS {
		if !ownMountNS(p.ParentMountNS) {
			return errors.New("not in a mount namespace of its own: refusing to mount")
		}
		if err := hide(p.Hide); err != nil {
			return err
		}
	}
	if err := restrict(p); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return dropCapabilities()
}

// ownMountNS reports whether this process is in another mount namespace
// than parent (the caller's /proc/self/ns/mnt): the helper never mounts in
// the caller's namespace.
func ownMountNS(parent string) bool {
	ns, err := os.Readlink("/proc/self/ns/mnt")
	return err == nil && parent != "" && ns != parent
}

// privateMounts stops mounts of this namespace from propagating out.
func privateMounts() error {
	return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
}

// hide covers each existing directory in paths with an empty read-only
// tmpfs, in this process's private mount namespace.
func hide(paths []string) error {
	if err := privateMounts(); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			continue
		}
		flags := uintptr(unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
		if err := unix.Mount("pm-hidden", p, "tmpfs", flags, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("hiding %s: %w", p, err)
		}
	}
	return nil
}

// dropCapabilities empties the bounding, ambient and inheritable sets and
// this thread's capabilities, so neither sh nor anything it execs holds a
// capability (a pm run as root hands agents a plain uid 0, not root).
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EPERM) {
			break // no CAP_SETPCAP: an unprivileged process, with no capability to hand on
		}
		if err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	return nil
}
