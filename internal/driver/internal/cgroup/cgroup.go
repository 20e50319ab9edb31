// Package cgroup gives each agent host a control group of its own, where the
// kernel lets pm make one: a cgroup v2 group (everything the host starts,
// setsid or not, stays in it and ends with one write to cgroup.kill) and,
// where the pids controller is offered only on a cgroup v1 hierarchy, a v1
// pids group beside it for the process-count limit. It is internal to the
// driver: nothing else creates, joins or kills a group.
//
// Invariants:
//   - mounts are found in /proc/self/mountinfo, never assumed: cgroup2 may
//     sit at /sys/fs/cgroup or at /sys/fs/cgroup/unified beside v1
//     controllers;
//   - pm's groups live in a directory named Dir under the cgroup of the
//     process that starts the host, with the trailing pm groups of that
//     cgroup stripped (a host starting another host puts it beside itself,
//     never inside);
//   - a group pm acts on must be Dir/<run> under a mount of the right kind,
//     run being the handle's own token: a record an agent rewrote cannot
//     steer a kill at another cgroup;
//   - nothing here waits by sleeping: an emptying group is waited for on
//     cgroup.events (POLLPRI), bounded by the caller's context;
//   - a process that must outlive the run it was forked in (the
//     supervisor, revived by a pm command an agent's host ran) leaves that
//     run's groups for fresh ones of its own (Leave): no run's kill ends it.
package cgroup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/plasmodium/pm/internal/driver/internal/proc"
)

// Dir is the directory of pm's agent groups inside a cgroup hierarchy.
const Dir = "pm-agents"

// mount is one cgroup file system: where it is mounted, which part of the
// hierarchy it shows (its root), and for v1 which controllers it carries.
type mount struct {
	point, root string
	v2          bool
	opts        string // v1 super options: "rw,pids"
}

// mounts reads the cgroup mounts of this process's mount namespace.
func mounts() []mount {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []mount
	for line := range strings.SplitSeq(string(data), "\n") {
		// id parent maj:min root point opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := mount{point: unescape(f[4]), root: unescape(f[3]), opts: g[2]}
		switch g[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasOpt reports whether the comma-separated opts hold o.
func hasOpt(opts, o string) bool {
	for x := range strings.SplitSeq(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// ownPath returns this process's cgroup path in the v2 hierarchy (want ""),
// or in the v1 hierarchy carrying controller want, from /proc/self/cgroup.
func ownPath(want string) (string, bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if want == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], true
		}
		if want != "" && hasOpt(parts[1], want) {
			return parts[2], true
		}
	}
	return "", false
}

// base returns the directory under which pm makes its groups in hierarchy m
// (own: this process's path there): the own group with the pm groups it may
// sit in stripped, seen through the mount (a mount that shows only part of
// the hierarchy, as in a container, drops that part's prefix).
func base(m mount, own string) (string, bool) {
	if i := strings.Index(own, "/"+Dir+"/"); i >= 0 {
		own = own[:i]
	}
	rel := own
	if m.root != "/" {
		if own != m.root && !strings.HasPrefix(own, m.root+"/") {
			return "", false
		}
		rel = strings.TrimPrefix(own, m.root)
	}
	return filepath.Join(m.point, rel), true
}

// Group is one agent's groups: V2 (the containment) and Pids (a v1 pids
// group, only where the v2 hierarchy offers no pids controller). Either may
// be empty; Limit says which process-count limit holds ("" for none).
type Group struct {
	V2, Pids string
	Limit    string
	fd       int // an open V2 directory for CLONE_INTO_CGROUP; -1 when none
}

// FD is the descriptor of the v2 group to clone the host into, or -1.
func (g *Group) FD() int { return g.fd }

// Close releases the descriptor FD returned.
func (g *Group) Close() {
	if g.fd >= 0 {
		_ = unix.Close(g.fd)
		g.fd = -1
	}
}

// New makes the groups of run where this process may: a v2 group, with
// pids.max = maxProcs when the pids controller can be enabled there, else a
// v1 pids group for the limit. maxProcs 0 sets no limit. It never fails: a
// group that cannot be made is left out (Group's fields say what holds).
func New(run string, maxProcs int) *Group {
	g := &Group{fd: -1}
	if !validRun(run) {
		return g
	}
	ms := mounts()
	for _, m := range ms {
		if !m.v2 {
			continue
		}
		own, ok := ownPath("")
		if !ok {
			break
		}
		b, ok := base(m, own)
		if !ok {
			break
		}
		if dir, pids := makeGroup(b, run, true, maxProcs); dir != "" {
			fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				_ = unix.Rmdir(dir)
				break
			}
			g.V2, g.fd = dir, fd
			if pids {
				g.Limit = "pids.max " + strconv.Itoa(maxProcs)
			}
		}
		break
	}
	if g.Limit != "" || maxProcs <= 0 {
		return g
	}
	for _, m := range ms {
		if m.v2 || !hasOpt(m.opts, "pids") {
			continue
		}
		own, ok := ownPath("pids")
		if !ok {
			break
		}
		b, ok := base(m, own)
		if !ok {
			break
		}
		if dir, pids := makeGroup(b, run, false, maxProcs); pids {
			g.Pids, g.Limit = dir, "pids.max "+strconv.Itoa(maxProcs)+" (cgroup v1)"
		} else if dir != "" {
			_ = unix.Rmdir(dir)
		}
		break
	}
	return g
}

// makeGroup makes base/Dir/run, enabling the pids controller on the way in a
// v2 hierarchy, and sets pids.max when maxProcs > 0. It returns the
// directory ("" when it cannot be made) and whether the limit holds.
func makeGroup(b, run string, v2 bool, maxProcs int) (string, bool) {
	parent := filepath.Join(b, Dir)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", false
	}
	if v2 && maxProcs > 0 && enabled(b, "pids") {
		// Best effort: a parent holding processes refuses (EBUSY), and
		// then there is no pids.max below it.
		_ = os.WriteFile(filepath.Join(b, "cgroup.subtree_control"), []byte("+pids"), 0)
		_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids"), 0)
	}
	removeStale(parent)
	dir := filepath.Join(parent, run)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", false
	}
	if maxProcs <= 0 {
		return dir, false
	}
	err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(maxProcs)), 0)
	return dir, err == nil
}

// staleAfter is how old an empty group must be before a starter removes
// it: far longer than the moment between a group's mkdir and the clone into
// it, so a group another starter is about to use is never taken away.
const staleAfter = time.Minute

// removeStale removes the empty groups of runs whose host left without
// anyone removing its group (it ended by itself with no supervisor to see
// it, or was killed with its starter). rmdir refuses a group that holds a
// process, so a live run's group stays whatever its age.
func removeStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !validRun(e.Name()) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAfter {
			_ = unix.Rmdir(filepath.Join(parent, e.Name()))
		}
	}
}

// enabled reports whether controller c is offered in group dir.
func enabled(dir, c string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && hasOpt(strings.ReplaceAll(strings.TrimSpace(string(data)), " ", ","), c)
}

// Join moves process pid into the v1 pids group (v2 needs no join: the host
// is cloned into its group). Moving a process moves all its threads.
func (g *Group) Join(pid int) error {
	if g.Pids == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(g.Pids, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// DropPids removes the v1 pids group again (the host could not join it):
// the run has no process limit then, and says so.
func (g *Group) DropPids() {
	if g.Pids != "" {
		_ = unix.Rmdir(g.Pids)
	}
	g.Pids, g.Limit = "", ""
}

// Drop removes the groups again (the host could not be started in them).
func (g *Group) Drop() {
	g.Close()
	for _, d := range []string{g.V2, g.Pids} {
		if d != "" {
			_ = unix.Rmdir(d)
		}
	}
	g.V2, g.Pids, g.Limit = "", "", ""
}

// validRun: a run token is hex, as the driver makes them; anything else
// (an edited record) names no group.
func validRun(run string) bool {
	if len(run) < 8 || len(run) > 64 {
		return false
	}
	for _, c := range run {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Valid reports whether dir is run's group in a cgroup hierarchy of the
// right version mounted here: .../Dir/run, clean, under such a mount.
func Valid(dir, run string, v2 bool) bool {
	if dir == "" || !validRun(run) || filepath.Clean(dir) != dir || !filepath.IsAbs(dir) {
		return false
	}
	if filepath.Base(dir) != run || filepath.Base(filepath.Dir(dir)) != Dir {
		return false
	}
	for _, m := range mounts() {
		if m.v2 == v2 && (v2 || hasOpt(m.opts, "pids")) && strings.HasPrefix(dir, m.point+"/") {
			return true
		}
	}
	return false
}

// Procs lists the processes in group dir.
func Procs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for f := range bytes.FieldsSeq(data) {
		if pid, err := strconv.Atoi(string(f)); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// KillExcept SIGKILLs every process of group dir but self (a host ending
// its own run) until none is left, and reports whether there was any. A
// process forking meanwhile is caught by the next pass; each pass kills what
// it sees, so the group cannot outgrow the passes for long.
func KillExcept(dir string, self int) bool {
	any := false
	for range 1000 {
		found := false
		for _, pid := range Procs(dir) {
			if pid == self {
				continue
			}
			found, any = true, true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !found {
			return any
		}
	}
	return any
}

// Kill ends every process of group dir and removes the group once it is
// empty (waiting until ctx ends). It reports whether any process was there.
// A v2 group is ended with one write to cgroup.kill (Linux 5.14+), which
// reaches processes forking meanwhile; elsewhere each process is killed
// until none is left.
func Kill(ctx context.Context, dir string, v2 bool) bool {
	procs := Procs(dir)
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	if !v2 || os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) != nil {
		KillExcept(dir, 0)
	}
	if v2 {
		waitEmpty(ctx, dir)
	}
	removeWhenEmpty(ctx, dir)
	return len(procs) > 0
}

// waitEmpty waits until v2 group dir holds no process (cgroup.events says
// "populated 0"; the kernel signals each change with POLLPRI) or ctx ends.
func waitEmpty(ctx context.Context, dir string) {
	f, err := os.Open(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return
	}
	defer f.Close()
	for ctx.Err() == nil {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if err != nil || bytes.Contains(data, []byte("populated 0")) {
			return
		}
		// Poll in slices so a cancelled ctx is seen; the kernel wakes the
		// poll as soon as the group empties.
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
		_, _ = unix.Poll(fds, 100)
	}
}

// removeWhenEmpty removes group dir once its processes are gone: it kills
// what is left and waits for each to exit on a pidfd (proc.Wait), as long as
// ctx allows. A group that still refuses (EBUSY) is left for the next stop.
func removeWhenEmpty(ctx context.Context, dir string) {
	for range 100 {
		err := unix.Rmdir(dir)
		if err == nil || !errors.Is(err, unix.EBUSY) || ctx.Err() != nil {
			return
		}
		left := Procs(dir)
		if len(left) == 0 {
			return // torn down but not yet released: the next stop removes it
		}
		KillExcept(dir, 0)
		for _, pid := range left {
			_ = proc.Wait(ctx, pid, 0)
		}
	}
}

// Leave moves this process out of the pm groups it sits in (a run's v2
// group, and its v1 pids group) into fresh groups of its own named token,
// beside them under Dir: a process a host forked that must outlive the run
// (the supervisor, revived by a pm command the host ran for its agent) is
// then not ended with that run's group. Where it sits in no pm group it
// does nothing. Moving needs no more than making a run's group does (the
// common ancestor is Dir); where the kernel refuses, it stays and says why.
func Leave(token string) (moved bool, err error) {
	if !validRun(token) {
		return false, errors.New("cgroup: invalid group name " + token)
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, m := range mounts() {
		want := ""
		if !m.v2 {
			if !hasOpt(m.opts, "pids") {
				continue
			}
			want = "pids"
		}
		own, ok := ownPath(want)
		if !ok || !strings.Contains(own+"/", "/"+Dir+"/") {
			continue
		}
		b, ok := base(m, own)
		if !ok {
			continue
		}
		dir, _ := makeGroup(b, token, m.v2, 0)
		if dir == "" {
			return moved, errors.New("cgroup: cannot make a group of its own under " + filepath.Join(b, Dir))
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0); err != nil {
			_ = unix.Rmdir(dir)
			return moved, err
		}
		moved = true
	}
	return moved, nil
}
