//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// requireContained skips where the kernel gives no PID namespace to an
// unconfined command (user namespaces refused).
func requireContained(t *testing.T) {
	t.Helper()
	if !Contained() {
		t.Skip("no PID namespace for unconfined commands here")
	}
}

// An unconfined command (sandbox.off, an unsandboxed exec agent) runs in a
// PID namespace of its own, as the user it was started by: its uid and gid,
// its own /proc (so $$ names it there), its exit code passed back, a
// missing command 127.
func TestContainRunsAsTheUser(t *testing.T) {
	requireContained(t)
	own, _ := os.Readlink("/proc/self/ns/pid")
	cases := []struct {
		name string
		line string
		code int
		want string
	}{
		{"identity", `echo "$(id -u) $(id -g)"`, 0, strconv.Itoa(os.Getuid()) + " " + strconv.Itoa(os.Getgid())},
		{"own PID namespace", `readlink /proc/self/ns/pid`, 0, "pid:["},
		{"own /proc", `cat /proc/$$/comm`, 0, "sh"},
		{"exit code", `exit 7`, 7, ""},
		{"files as the user", `touch f && stat -c '%u %g' f`, 0, strconv.Itoa(os.Getuid()) + " " + strconv.Itoa(os.Getgid())},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := Unconfined(context.Background(), c.line)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSpace(string(out))
			if code != c.code || !strings.HasPrefix(got, c.want) {
				t.Fatalf("exit %d (want %d), output %q (want %q...)", code, c.code, got, c.want)
			}
			if c.name == "own PID namespace" && got == own {
				t.Fatalf("the command runs in the caller's PID namespace %s", own)
			}
		})
	}
	argv, attr, ok := Contain([]string{"/nonexistent/cmd"})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if ee, isExit := err.(*exec.ExitError); !ok || !isExit || ee.ExitCode() != 127 {
		t.Fatalf("missing command: ok %v, %v, %q", ok, err, out)
	}
}

// What an unconfined command leaves running, in a session of its own with
// its environment cleared, ends when its init is killed (as when the
// process that started it dies: Pdeathsig).
func TestContainNothingOutlivesKilledCommand(t *testing.T) {
	requireContained(t)
	tmp := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	token := "pm-bg-" + strconv.Itoa(os.Getpid()) + "-contain"
	line := `mkfifo "$TMPDIR/f"; setsid env -i sh -c 'echo up > "$1"; read x < "$1"; :' ` + splitToken(token) + ` "$TMPDIR/f" </dev/null >/dev/null 2>&1 &
read up < "$TMPDIR/f"; echo "$up"; exec sleep 600`
	cmd := Unconfined(context.Background(), line)
	cmd.Dir, cmd.Env, cmd.Stdout = tmp, append(os.Environ(), "TMPDIR="+tmp), w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if first, err := bufio.NewReader(r).ReadString('\n'); err != nil || first != "up\n" {
		t.Fatalf("first line %q, %v", first, err)
	}
	killAndWaitGone(t, cmd, findProcess(t, token))
}

// BenchmarkContain is what a PID namespace adds to starting an unconfined
// command (an unsandboxed exec agent's CLI once per host run, every
// run_command with sandbox.off): `true` started plainly, and under
// Contain's init (through the spawner for an ordinary user). A host pays
// one more such start the first time it asks (the probe, Contained).
func BenchmarkContain(b *testing.B) {
	t, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(t).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("contained", func(b *testing.B) {
		if !Contained() {
			b.Skip("no PID namespace here")
		}
		for b.Loop() {
			argv, attr, _ := Contain([]string{t})
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.SysProcAttr = attr
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// killAndWaitGone kills cmd with SIGKILL and waits, at most 30 s, for the
// process bg it left running (a detached one, by its pidfd, so a reused
// pid cannot answer) to be gone: the test fails when it outlives cmd.
func killAndWaitGone(t *testing.T, cmd *exec.Cmd, bg int) {
	t.Helper()
	pidfd, err := unix.PidfdOpen(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	t.Cleanup(func() { _ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0) })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// Bounded: on a fault the process sleeps for 600 s.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 30_000); err != nil || n == 0 {
		t.Fatalf("the detached, unmarked process %d outlived its command killed -9 (poll: %d, %v)", bg, n, err)
	}
}
