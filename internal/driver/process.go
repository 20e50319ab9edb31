package driver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/driver/internal/cgroup"
	"github.com/plasmodium/pm/internal/driver/internal/proc"
	"github.com/plasmodium/pm/internal/envlist"
)

// Process is the driver of real processes: each agent host leads its own
// process group, is named by pid + start time, is watched through a pidfd
// and stopped by signalling its group.
type Process struct {
	grace time.Duration

	mu       sync.Mutex
	children map[Handle]*child // started here; kept until a Wait collects the exit
}

// child is a process this driver started; its reaper records how it ended.
type child struct {
	done   chan struct{}
	status ExitStatus
}

// NewProcess returns a process driver whose Stop gives an agent grace
// between SIGTERM and SIGKILL (pm's one stop grace, runtime.stop_grace_seconds).
func NewProcess(grace time.Duration) *Process {
	return &Process{grace: grace, children: map[Handle]*child{}}
}

// Self returns the handle of the calling process, for a host recording itself.
func Self() (Handle, error) { return Find(os.Getpid()) }

// Find returns the handle of process pid as it runs now (its start time read
// from /proc); the pid is kept even when that fails. Agents get their
// handles from Start; this names a process pm did not start through a
// driver (the host itself, a test's grandchild).
func Find(pid int) (Handle, error) {
	start, err := proc.StartTime(pid)
	return Handle{Pid: pid, PidStart: start}, err
}

// Start runs spec in a new process group and reaps it when it exits, so a
// long-lived starter (the supervisor, an owner's host) never keeps zombies.
// The host may outlive the caller (it is then re-parented to init). Where
// the kernel lets pm make one, the host is cloned straight into a cgroup of
// its own (CLONE_INTO_CGROUP: no moment outside it), with the process limit
// spec.MaxProcs as pids.max (see internal/driver/internal/cgroup); where
// not, its run is found by its marker (RunEnv) and the host becomes the
// subreaper of what it starts.
func (d *Process) Start(_ context.Context, spec Spec) (Handle, error) {
	if len(spec.Argv) == 0 {
		return Handle{}, errors.New("start " + spec.Name + ": nothing to run")
	}
	NoInherit()
	run := newRun()
	g := cgroup.New(run, spec.MaxProcs)
	env := withRun(spec.Env, run)
	nproc := g.Limit == "" && spec.MaxProcs > 0
	if nproc {
		// No pids controller: the sandbox helper sets RLIMIT_NPROC where
		// it counts one command's processes only (a user namespace).
		env = envlist.Set(env, NprocEnv, strconv.Itoa(spec.MaxProcs))
	}
	cmd, err := startHost(spec, env, g.FD())
	if err != nil && g.FD() >= 0 {
		// The kernel refused the clone into the group (no clone3 with
		// cgroups before Linux 5.7, a group pm may not move into): start
		// the host without it, contained by its marker.
		g.Drop()
		cmd, err = startHost(spec, env, -1)
	}
	g.Close()
	if err != nil {
		g.Drop()
		return Handle{}, err
	}
	// Read the start time before the reaper runs: until it is reaped the
	// child's /proc entry stays, even if it has already exited.
	pid := cmd.Process.Pid
	start, _ := proc.StartTime(pid)
	if g.Join(pid) != nil {
		g.DropPids()
	}
	h := Handle{Pid: pid, PidStart: start, Run: run, Cgroup: g.V2, PidsCgroup: g.Pids, Containment: describe(g, spec.MaxProcs, nproc)}
	c := &child{done: make(chan struct{})}
	d.mu.Lock()
	if d.children == nil {
		d.children = map[Handle]*child{}
	}
	d.children[h] = c
	d.mu.Unlock()
	go func() {
		c.status = ExitStatus{Code: exitCode(cmd.Wait())}
		close(c.done)
	}()
	return h, nil
}

// startHost starts the host of spec with env, cloned into the cgroup open
// at cgroupFD when that is not -1.
func startHost(spec Spec, env []string, cgroupFD int) (*exec.Cmd, error) {
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir, cmd.Env = spec.Dir, env
	cmd.Stdout, cmd.Stderr = spec.Output, spec.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if spec.DieWithParent {
		DieWithParent(cmd.SysProcAttr)
	}
	if cgroupFD >= 0 {
		intoCgroup(cmd.SysProcAttr, cgroupFD)
	}
	return cmd, cmd.Start()
}

// describe says for people how a run is contained and bounded; nproc: the
// sandbox helper is told the limit (NprocEnv).
func describe(g *cgroup.Group, maxProcs int, nproc bool) string {
	how := noCgroup
	if g.V2 != "" {
		how = "cgroup"
	}
	switch {
	case g.Limit != "":
		return how + ", " + g.Limit
	case nproc:
		return how + ", nproc " + strconv.Itoa(maxProcs) + " per sandboxed command"
	}
	return how + ", no process limit"
}

// Wait returns when the process exits. The exit code is known for this
// driver's own children: each keeps its status (a few bytes) until the first
// Wait that sees the exit collects it; waits already under way get it too.
func (d *Process) Wait(ctx context.Context, h Handle) (ExitStatus, error) {
	d.mu.Lock()
	c := d.children[h]
	d.mu.Unlock()
	if c != nil {
		select {
		case <-c.done:
			d.mu.Lock()
			delete(d.children, h)
			d.mu.Unlock()
			return c.status, nil
		case <-ctx.Done():
			return ExitStatus{Code: Unknown}, ctx.Err()
		}
	}
	if err := proc.Wait(ctx, h.Pid, h.PidStart); err != nil {
		return ExitStatus{Code: Unknown}, err
	}
	return ExitStatus{Code: Unknown}, nil
}

// Stop sends SIGTERM to the group, waits up to the grace for the leader to
// exit, then sends SIGKILL to whatever is left of the group, ends the run's
// cgroup (cgroup.kill: setsid or not, everything it holds) and removes it,
// and kills every process of the run that left the group (setsid: RunEnv).
// A recycled pid is never signalled; the run's marker and its groups name
// only this run.
func (d *Process) Stop(ctx context.Context, h Handle) (bool, error) {
	graced, cancel := context.WithTimeout(ctx, d.grace)
	defer cancel()
	stopped, err := proc.StopGroup(graced, h.Pid, h.PidStart)
	if endGroups(ctx, h) {
		stopped = true
	}
	if killRun(h.Run) {
		stopped = true
	}
	return stopped, err
}

// groupWait bounds how long Stop waits for a killed cgroup to empty before
// removing it (the kernel empties it in moments; a group left is removed
// by the next Stop).
const groupWait = 10 * time.Second

// endGroups kills everything in h's cgroups and removes them; it reports
// whether any process was there. A group the handle names that is not this
// run's (an edited record) is left alone.
func endGroups(ctx context.Context, h Handle) bool {
	ctx, cancel := context.WithTimeout(ctx, groupWait)
	defer cancel()
	any := false
	if cgroup.Valid(h.Cgroup, h.Run, true) && cgroup.Kill(ctx, h.Cgroup, true) {
		any = true
	}
	if cgroup.Valid(h.PidsCgroup, h.Run, false) && cgroup.Kill(ctx, h.PidsCgroup, false) {
		any = true
	}
	return any
}

// Signal sends sig to the host process alone, after its start-time check.
func (d *Process) Signal(h Handle, sig syscall.Signal) error {
	return proc.Signal(h.Pid, h.PidStart, sig)
}

// Alive reports whether the process named by h runs (a zombie does not).
func (d *Process) Alive(h Handle) bool { return proc.Alive(h.Pid, h.PidStart) }

// exitCode maps cmd.Wait's error to an exit code, 128+n for signal n, the way
// a shell reports it.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return Unknown
}
