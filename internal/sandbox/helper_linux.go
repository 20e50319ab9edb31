package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
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
	if len(args) > 0 && args[0] == spawnArg {
		return spawn(args[1:])
	}
	if len(args) > 0 && (args[0] == initArg || args[0] == initReportArg) {
		return nsInit(args[0] == initReportArg, args[1:])
	}
	if (len(args) == 2 || len(args) == 3) && args[0] == "probe" {
		if !ownMountNS(args[1]) {
			fmt.Fprintln(os.Stderr, "not in a mount namespace of its own")
			return 1
		}
		if err := privateMounts(); err != nil {
			fmt.Fprintf(os.Stderr, "private mounts: %v\n", err)
			return 1
		}
		if len(args) == 3 && args[2] == probeProcArg {
			if err := mountProc(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
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
	if err := limitProcesses(); err != nil {
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

// spawnArg, after helperArg, makes the helper a spawner: it starts the
// helper proper (the rest of its arguments) in a new user and mount
// namespace and waits for it (see helperArgv).
const spawnArg = "spawn"

// forwarded are the signals a spawner passes on to the helper it waits for:
// the ones pm and a terminal send to stop a command. A signal to the whole
// process group reaches the helper directly as well (it is in the
// spawner's group).
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// spawn starts `helper args` in a new user and mount namespace (and PID
// namespace, when args start with initArg), dies with it (the exit code, or
// the same signal) and it with the spawner (Pdeathsig: this thread is
// locked, see init). The spawner is never confined: it runs nothing but the
// helper, and the helper, once confined, can neither signal nor trace it
// (Landlock scoping).
func spawn(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: cannot find its own binary: %v\n", err)
		return 126
	}
	attr := nsAttr(true)
	attr.Pdeathsig = syscall.SIGKILL
	if len(args) == 0 || args[0] != initArg {
		return spawnAndWait(exe, args, attr, nil, nil)
	}
	// A PID 1 cannot die of a signal it sends itself: the init reports how
	// the helper ended through a pipe, so that the spawner can.
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: %v\n", err)
		return 126
	}
	defer r.Close()
	attr.Cloneflags |= syscall.CLONE_NEWPID
	return spawnAndWait(exe, append([]string{initReportArg}, args[1:]...), attr, w, r)
}

// spawnAndWait runs `exe helperArg args` with attr, passing the forwarded
// signals on, and ends as it did (or as its init reported on status).
func spawnAndWait(exe string, args []string, attr *syscall.SysProcAttr, report, status *os.File) int {
	cmd := exec.Command(exe, append([]string{helperArg}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = attr
	if report != nil {
		cmd.ExtraFiles = []*os.File{report}
	}
	sigs := make(chan os.Signal, len(forwarded))
	signal.Notify(sigs, forwarded...)
	err := cmd.Start()
	if report != nil {
		report.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: cannot start in a new user namespace: %v\n", err)
		return 126
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	signal.Stop(sigs)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if status != nil {
		if data, err := io.ReadAll(status); err == nil {
			if n, err := strconv.ParseUint(string(data), 10, 32); err == nil {
				ws = syscall.WaitStatus(n)
			}
		}
	}
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// initArg, after helperArg, makes the helper the init of a new PID
// namespace (nsInit); initReportArg also has it write how the helper ended
// to descriptor 3 (for the spawner).
const (
	initArg       = "init"
	initReportArg = "init-report"
)

// nsInit is PID 1 of the helper's PID namespace: it starts the helper
// proper (args) as its child (or, for Contain, the command: initChild),
// passes the forwarded signals on (a PID 1 gets only the signals it handles), reaps every orphan of the namespace, and
// exits as the helper did (a signal as 128+N: a PID 1 cannot die of its
// own). When it exits, or dies with its parent (Pdeathsig, set by whoever
// started it), the kernel kills every process left in the namespace. It is
// not the helper itself: the helper's all-threads system calls (Landlock)
// never finish in a PID 1.
func nsInit(report bool, args []string) int {
	var status *os.File
	if report {
		syscall.CloseOnExec(3)
		status = os.NewFile(3, "status")
	}
	cmd, err := initChild(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: %v\n", err)
		var notFound *exec.Error // exec.LookPath's, as the helper proper says 127
		if errors.As(err, &notFound) {
			return 127
		}
		return 126
	}
	sigs := make(chan os.Signal, len(forwarded))
	signal.Notify(sigs, forwarded...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "pm sandbox: %v\n", err)
		return 126
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	ws := reapUntil(cmd.Process.Pid)
	if status != nil {
		fmt.Fprintf(status, "%d", uint32(ws))
		status.Close()
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// initChild is the init's one child: the helper proper with args, or, for
// Contain (containArg), the command itself, unconfined.
func initChild(args []string) (*exec.Cmd, error) {
	if len(args) > 0 && args[0] == containArg {
		return containCommand(args[1:])
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find its own binary: %w", err)
	}
	return exec.Command(exe, append([]string{helperArg}, args...)...), nil
}

// reapUntil reaps every child (orphans of the namespace come to its PID 1)
// until pid has ended, and returns how it did.
func reapUntil(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || got == pid {
			return ws
		}
	}
}

// confine overlays files and hides the state (in a mount namespace),
// restricts this process with Landlock and drops its capabilities.
func confine(p Policy) error {
	if p.MountNS {
		if !ownMountNS(p.ParentMountNS) {
			return errors.New("not in a mount namespace of its own: refusing to mount")
		}
		if err := privateMounts(); err != nil {
			return fmt.Errorf("private mounts: %w", err)
		}
		if p.PIDNS {
			if err := mountProc(); err != nil {
				return err
			}
		}
		// Read-only binds first (a bind of a directory would cover an
		// overlay below it), overlays next: a source under a hidden path
		// is still reachable.
		if err := readOnly(p.ReadOnly); err != nil {
			return err
		}
		if err := overlay(p.Overlay); err != nil {
			return err
		}
		if err := hide(p.Hide); err != nil {
			return err
		}
	} else if len(p.Overlay) > 0 {
		return errors.New("an overlay needs a mount namespace of its own: refusing to run against the real files")
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

// mountProc mounts a /proc of this process's PID namespace over the one
// it inherited, which shows the outer namespace: pids read there would not
// be the ones getpid and kill use (libpsx, which Landlock uses in cgo
// builds, lists /proc/<getpid()>/task), and it would show every process of
// the machine.
func mountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc of its own PID namespace: %w", err)
	}
	return nil
}

// privateMounts stops mounts of this namespace from propagating out.
func privateMounts() error {
	return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
}

// overlay bind-mounts each source read-only over its target, in this
// process's private mount namespace.
func overlay(files []Overlay) error {
	for _, o := range files {
		if err := bindReadOnly(o.Source, o.Target); err != nil {
			return fmt.Errorf("overlaying %s: %w", o.Target, err)
		}
	}
	return nil
}

// readOnly bind-mounts each existing path read-only over itself, in this
// process's private mount namespace: whatever Landlock grants, a write
// there fails (EROFS), and the path, a mount point, cannot be removed or
// renamed (EBUSY). A path gone since the policy was made is skipped (there
// is nothing left to protect; one created later is not protected).
func readOnly(paths []string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := bindReadOnly(p, p); err != nil {
			return fmt.Errorf("making %s read-only: %w", p, err)
		}
	}
	return nil
}

// bindReadOnly bind-mounts source over target and makes that mount
// read-only. The remount keeps the flags the target's mount is locked with
// (nosuid, nodev, ...): a user namespace may not clear them.
func bindReadOnly(source, target string) error {
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(target, &sf); err != nil {
		return err
	}
	locked := uintptr(sf.Flags) & (unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC | unix.ST_NOATIME | unix.ST_NODIRATIME | unix.ST_RELATIME)
	return unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|locked, "")
}

// hide covers each existing directory in paths with an empty read-only
// tmpfs, in this process's private mount namespace.
func hide(paths []string) error {
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
