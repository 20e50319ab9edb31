package driver_test

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/plasmodium/pm/internal/driver"
)

// startDetaching starts a host that puts a child in its own session (setsid,
// out of the host's process group) and returns the host's handle and the
// child's, read from the host's output (a pipe: the read wakes on the line).
func startDetaching(t *testing.T, d *driver.Process) (host, child driver.Handle) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	script := `setsid sh -c 'echo $$; exec sleep 1000' & exec sleep 1000`
	host, err = d.Start(context.Background(), driver.Spec{Name: "detach", Argv: []string{"sh", "-c", script}, Output: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	child, err = driver.Find(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return host, child
}

// A child that left the host's session ends with the run: on Stop of a live
// host, and on Stop after the host was killed -9 (the supervisor's cleanup
// before a respawn). Waits are pidfds.
func TestStopEndsDetachedChildren(t *testing.T) {
	for _, hostKilled := range []bool{false, true} {
		d := driver.NewProcess(0)
		host, child := startDetaching(t, d)
		if host.Run == "" {
			t.Fatal("the handle names no run")
		}
		if hostKilled {
			killHost(t, d, host, child)
		}
		if _, err := d.Stop(context.Background(), host); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Wait(waitCtx(t), child); err != nil {
			env, _ := os.ReadFile("/proc/" + strconv.Itoa(child.Pid) + "/environ")
			stat, _ := os.ReadFile("/proc/" + strconv.Itoa(child.Pid) + "/stat")
			t.Fatalf("host killed %v: the detached child outlived Stop: %v; env %q run %q stat %s", hostKilled, err, env, host.Run, stat)
		}
	}
}

// EndRun acts only for the host of the run it was started as: a handle with
// no run, another process's handle, or a run this process was not started
// with (a host run by hand inside another agent) ends nothing.
func TestEndRunOnlyForItsOwnRun(t *testing.T) {
	t.Setenv(driver.RunEnv, "feedface")
	self := os.Getpid()
	for _, c := range []struct {
		name string
		h    driver.Handle
	}{
		{"no run", driver.Handle{Pid: self}},
		{"another process", driver.Handle{Pid: self + 1, Run: "feedface"}},
		{"another run", driver.Handle{Pid: self, Run: "0123abcd"}},
	} {
		if driver.EndRun(c.h) {
			t.Errorf("%s: EndRun ended something", c.name)
		}
	}
}

// killHost kills host with SIGKILL, waits for it, and fails the test when
// child died with it (a leftover the test means to see ended would be gone
// already: the test would show nothing).
func killHost(t *testing.T, d *driver.Process, host, child driver.Handle) {
	t.Helper()
	if err := syscall.Kill(host.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Wait(waitCtx(t), host); err != nil {
		t.Fatal(err)
	}
	if !d.Alive(child) {
		t.Fatal("the child died with its host: the test shows nothing")
	}
}
