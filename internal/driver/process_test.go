package driver_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/driver"
)

// hang bounds waits that end on a kernel event; it only keeps a broken test
// from hanging.
const hang = time.Minute

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	t.Cleanup(cancel)
	return ctx
}

// start runs sh -c script through d, output to a file it returns the path of.
func start(t *testing.T, d driver.Driver, script string) (driver.Handle, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := d.Start(context.Background(), driver.Spec{Name: "t", Argv: []string{"sh", "-c", script}, Dir: t.TempDir(), Env: []string{"GREETING=hello"}, Output: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-h.Pid, syscall.SIGKILL) })
	return h, out
}

// Own children: their exit status is known, they are reaped (no zombie),
// they lead their own process group and write to the given output.
func TestProcessStartWaitStatus(t *testing.T) {
	tests := []struct {
		name   string
		script string
		code   int
	}{
		{"exit 0", "echo $GREETING; exit 0", 0},
		{"exit 3", "echo $GREETING; exit 3", 3},
		{"killed by a signal", "echo $GREETING; kill -9 $$", 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := driver.NewProcess(time.Second)
			h, out := start(t, d, tt.script)
			if h.Pid <= 0 || h.PidStart == 0 {
				t.Fatalf("handle %+v, want a pid and its start time", h)
			}
			st, err := d.Wait(waitCtx(t), h)
			if err != nil || st.Code != tt.code {
				t.Fatalf("Wait = %+v, %v; want code %d", st, err, tt.code)
			}
			if d.Alive(h) {
				t.Fatal("alive after Wait")
			}
			if again, err := driver.Find(h.Pid); err == nil && again == h {
				t.Fatal("the exited child is still in /proc: not reaped")
			}
			if data, _ := os.ReadFile(out); string(data) != "hello\n" {
				t.Fatalf("output %q", data)
			}
		})
	}
}

func TestProcessStartsItsOwnGroup(t *testing.T) {
	d := driver.NewProcess(time.Second)
	h, _ := start(t, d, "sleep 300")
	if pgid, err := syscall.Getpgid(h.Pid); err != nil || pgid != h.Pid {
		t.Fatalf("pgid %d, %v; want the host to lead its group %d", pgid, err, h.Pid)
	}
	if !d.Alive(h) {
		t.Fatal("a sleeping host is not alive")
	}
}

func TestProcessStartFails(t *testing.T) {
	d := driver.NewProcess(time.Second)
	for _, argv := range [][]string{nil, {"/nonexistent/pm", "agent-run", "x"}} {
		if h, err := d.Start(context.Background(), driver.Spec{Name: "x", Argv: argv}); err == nil {
			t.Errorf("Start(%q) = %+v, want an error", argv, h)
		}
	}
}

// A process some other process started: Wait wakes on its exit (pidfd), with
// the code unknown; a cancelled wait returns the context's error.
func TestProcessWaitNotOurChild(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	h, err := driver.Find(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	d := driver.NewProcess(time.Second)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Wait(cancelled, h); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled context = %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	st, err := d.Wait(waitCtx(t), h)
	if err != nil || st.Code != driver.Unknown {
		t.Fatalf("Wait = %+v, %v; want an unknown code", st, err)
	}
}

// A handle whose start time does not match names some other process (the pid
// was recycled): it is not alive, Wait returns at once, and neither Stop nor
// Signal touches the process.
func TestProcessRecycledPidLeftAlone(t *testing.T) {
	d := driver.NewProcess(time.Second)
	h, _ := start(t, d, "sleep 300")
	stale := driver.Handle{Pid: h.Pid, PidStart: h.PidStart + 1}
	if d.Alive(stale) {
		t.Fatal("alive under a wrong start time")
	}
	if _, err := d.Wait(waitCtx(t), stale); err != nil {
		t.Fatal(err)
	}
	if stopped, err := d.Stop(context.Background(), stale); stopped || err != nil {
		t.Fatalf("Stop(stale) = %v, %v; want nothing done", stopped, err)
	}
	if err := d.Signal(stale, syscall.SIGKILL); !errors.Is(err, driver.ErrGone) {
		t.Fatalf("Signal(stale) = %v, want ErrGone", err)
	}
	if !d.Alive(h) {
		t.Fatal("the real process was hit through a stale handle")
	}
}

// startGroup runs script (which prints the pid of a background member of
// its group first) through d and returns the host's and the member's handles.
// The output is a pipe, so the test blocks on the line, not on a timer.
func startGroup(t *testing.T, d driver.Driver, script string) (driver.Handle, driver.Handle) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h, err := d.Start(context.Background(), driver.Spec{Name: "t", Argv: []string{"sh", "-c", script}, Output: w})
	w.Close() // the host holds its own copy
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-h.Pid, syscall.SIGKILL) })
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	m, err := driver.Find(pid)
	if err != nil {
		t.Fatal(err)
	}
	return h, m
}

// Stop ends the host and its group: a host that leaves on SIGTERM, and one
// that ignores it and is forced after the grace.
func TestProcessStopEndsGroup(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"leaves on SIGTERM", "sleep 300 >/dev/null & echo $!; wait"},
		{"ignores SIGTERM: forced after the grace", "trap '' TERM; sleep 300 >/dev/null & echo $!; while :; do wait; done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := driver.NewProcess(50 * time.Millisecond)
			h, m := startGroup(t, d, tt.script)
			stopped, err := d.Stop(context.Background(), h)
			if err != nil || !stopped {
				t.Fatalf("Stop = %v, %v", stopped, err)
			}
			for _, p := range []driver.Handle{h, m} {
				if _, err := d.Wait(waitCtx(t), p); err != nil || d.Alive(p) {
					t.Fatalf("pid %d survived Stop", p.Pid)
				}
			}
			// (A second Stop may still see the member as a zombie that
			// init has not reaped yet, so only its error is checked.)
			if _, err := d.Stop(context.Background(), h); err != nil {
				t.Fatalf("second Stop = %v", err)
			}
		})
	}
}

// The host died (kill -9) and left a member in its group: Stop forces the
// member at once, without waiting out the grace (the supervisor clears a
// crashed host's group this way before a respawn).
func TestProcessStopAfterHostDied(t *testing.T) {
	d := driver.NewProcess(time.Hour)
	h, m := startGroup(t, d, "sleep 300 >/dev/null & echo $!; wait")
	if err := d.Signal(h, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Wait(waitCtx(t), h); err != nil {
		t.Fatal(err)
	}
	if !d.Alive(m) {
		t.Fatal("Signal reached the member too; it must hit the host alone")
	}
	stopped, err := d.Stop(waitCtx(t), h) // a grace of an hour would hang the test
	if err != nil || !stopped {
		t.Fatalf("Stop = %v, %v; want the lingering member killed", stopped, err)
	}
	if _, err := d.Wait(waitCtx(t), m); err != nil || d.Alive(m) {
		t.Fatal("the lingering member survived")
	}
	if err := d.Signal(h, syscall.SIGTERM); !errors.Is(err, driver.ErrGone) {
		t.Fatalf("Signal to a gone host = %v, want ErrGone", err)
	}
}

// A cancelled context cuts Stop's grace short: SIGKILL follows at once.
func TestProcessStopCancelledGrace(t *testing.T) {
	d := driver.NewProcess(time.Hour)
	h, m := startGroup(t, d, "trap '' TERM; sleep 300 >/dev/null & echo $!; while :; do wait; done")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if stopped, err := d.Stop(ctx, h); err != nil || !stopped {
		t.Fatalf("Stop = %v, %v", stopped, err)
	}
	for _, p := range []driver.Handle{h, m} {
		if _, err := d.Wait(waitCtx(t), p); err != nil || d.Alive(p) {
			t.Fatalf("pid %d survived Stop", p.Pid)
		}
	}
}

func TestZeroHandle(t *testing.T) {
	d := driver.NewProcess(time.Second)
	var h driver.Handle
	if d.Alive(h) {
		t.Error("the zero handle is alive")
	}
	if _, err := d.Wait(context.Background(), h); err != nil {
		t.Errorf("Wait(zero) = %v", err)
	}
	if stopped, err := d.Stop(context.Background(), h); stopped || err != nil {
		t.Errorf("Stop(zero) = %v, %v; must never signal our own group", stopped, err)
	}
	if err := d.Signal(h, syscall.SIGTERM); !errors.Is(err, driver.ErrGone) {
		t.Errorf("Signal(zero) = %v", err)
	}
}

func TestSelf(t *testing.T) {
	h, err := driver.Self()
	if err != nil || h.Pid != os.Getpid() || h.PidStart == 0 {
		t.Fatalf("Self = %+v, %v", h, err)
	}
	if !driver.NewProcess(0).Alive(h) {
		t.Fatal("this process is not alive")
	}
}
