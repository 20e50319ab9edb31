//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fixture is a workspace with pm's state in it, a directory outside, and a
// process outside the sandbox with a secret in its environment.
type fixture struct {
	ws, outside, tmp string
	victim           int // pid of the process outside
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	f := &fixture{ws: real(t.TempDir()), outside: real(t.TempDir()), tmp: real(t.TempDir())}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.ws, ".plasmodium", "config.json"), "state secret\n")
	write(filepath.Join(f.ws, "src", "main.go"), "package main\n")
	write(filepath.Join(f.ws, ".git", "config"), "[core]\n\tbare = false\n")
	write(filepath.Join(f.ws, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n")
	write(filepath.Join(f.ws, "prompts", "greeter.md"), "greeter\n")
	write(filepath.Join(f.outside, "secret.txt"), "top secret\n")
	victim := exec.Command("sleep", "600")
	victim.Env = append(os.Environ(), "PM_VICTIM_KEY=sk-victim-0123456789")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	f.victim = victim.Process.Pid
	return f
}

func (f *fixture) policy() Policy {
	return New(f.ws, f.tmp, filepath.Join(f.ws, ".plasmodium"))
}

// run runs line confined by p, as run_command does, and returns its output
// and exit code.
func (f *fixture) run(t *testing.T, p Policy, line string) (string, int) {
	t.Helper()
	cmd, _ := Command(context.Background(), p, line)
	cmd.Dir = f.ws
	cmd.Env = append(os.Environ(), "TMPDIR="+f.tmp)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("%s: %v", line, err)
	return "", -1
}

// requireLandlock skips where the kernel has no Landlock (where Command runs
// commands unconfined by design).
func requireLandlock(t *testing.T) {
	t.Helper()
	if ABI() == 0 {
		t.Skip("the kernel offers no Landlock")
	}
}

// withoutMountNS runs the rest of the test as on a machine without user
// namespaces: the state directory is left out of the rules instead.
func withoutMountNS(t *testing.T) {
	probe()
	saved := probed.mountNS
	probed.mountNS = false
	t.Cleanup(func() { probed.mountNS = saved })
}

// reprobe runs the rest of the test with a fresh probe, as a process that
// starts with set does (the probe runs once per process).
func reprobe(t *testing.T, set func()) {
	probe()
	saved, savedUserNS := probed, userNS
	t.Cleanup(func() { probed, userNS, probeOnce = saved, savedUserNS, sync.Once{} })
	set()
	probed, probeOnce = support{}, sync.Once{}
	probe()
}

// nonDumpable makes this process non-dumpable for the rest of the test, as
// pm supervise and pm agent-run are.
func nonDumpable(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0) })
}

// The modes TestConfinedCommands runs each attack in. "spawner" is how an
// ordinary user's pm supervise or agent-run starts the helper: a
// non-dumpable process, through a user namespace (forced as root too).
var confinedModes = []string{"mount namespace", "spawner, not dumpable", "rules only"}

func setMode(t *testing.T, mode string) {
	switch mode {
	case "rules only":
		withoutMountNS(t)
	case "spawner, not dumpable":
		reprobe(t, func() { nonDumpable(t); userNS = true })
		if !probe().mountNS {
			t.Skipf("no user namespace here: %s", NoMountNS())
		}
	default:
		if !probe().mountNS {
			t.Skip("no mount namespace here")
		}
	}
}

// A non-dumpable process (pm supervise, pm agent-run) finds the mount
// namespace a dumpable one finds: it failed to map its user into a new user
// namespace (the child's /proc files belong to root), so an ordinary user's
// agents fell back to the rules-only mode.
func TestProbeNotDumpable(t *testing.T) {
	requireLandlock(t)
	dumpable := probe().mountNS
	reprobe(t, func() { nonDumpable(t) })
	if got := probe().mountNS; got != dumpable {
		t.Fatalf("mount namespace: %v when not dumpable, %v when dumpable (%s)", got, dumpable, NoMountNS())
	}
}

func TestConfinedCommands(t *testing.T) {
	requireLandlock(t)
	for _, mode := range confinedModes {
		t.Run(mode, func(t *testing.T) {
			setMode(t, mode)
			f := newFixture(t)
			victim := strconv.Itoa(f.victim)
			cases := []struct {
				name   string
				line   string
				ok     bool   // exit code 0 expected
				not    string // must not be in the output
				nsOnly bool   // only with a mount namespace
			}{
				{"write the workspace", "echo hi > src/new.txt && cat src/new.txt", true, "", false},
				{"new file at the top", "echo hi > top.txt && cat top.txt && rm top.txt", true, "", true},
				{"move between directories", "mkdir -p src/a src/b && echo x > src/a/f && mv src/a/f src/b/f && cat src/b/f", true, "", false},
				{"write TMPDIR", `echo hi > "$TMPDIR/t" && cat "$TMPDIR/t"`, true, "", false},
				{"read the system", "cat /etc/passwd > /dev/null && ls /usr/bin > /dev/null", true, "", false},
				{"write outside", "echo pwned > " + f.outside + "/secret.txt", false, "", false},
				{"create outside", "touch " + f.outside + "/new.txt", false, "", false},
				{"read the state", "cat .plasmodium/config.json", false, "state secret", false},
				{"list the state", "ls -a .plasmodium", true, "config.json", true},
				{"write the state", "echo x > .plasmodium/evil", false, "", false},
				{"remove the state", "rm .plasmodium/config.json", false, "", false},
				{"environ of pid 1", "cat /proc/1/environ", false, "PATH=", false},
				{"environ of another process", "cat /proc/" + victim + "/environ", false, "sk-victim", false},
				{"memory of another process", "head -c 16 /proc/" + victim + "/mem", false, "", false},
				{"signal another process", "kill -0 " + victim, false, "", false},
				{"no capabilities", "grep CapEff /proc/self/status", true, "", false},
				// What steers the unconfined side (issue 20): git's config and
				// hooks, the prompts. Readable, never writable.
				{"read .git and prompts", "cat .git/config prompts/greeter.md", true, "", false},
				{"fsmonitor into .git/config", "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config", false, "", false},
				{"a pre-commit hook", "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit", false, "", false},
				{"a sample hook renamed live", "mv .git/hooks/pre-commit.sample .git/hooks/pre-commit", false, "", false},
				{".git replaced", "mv .git .git.old", false, "", false},
				{".git emptied", "rm -rf .git", false, "", false},
				{"a prompt rewritten", "echo 'capabilities: [run_command]' > prompts/greeter.md", false, "", false},
				{"a prompt added", "echo x > prompts/evil.md", false, "", false},
				{"prompts replaced", "mv prompts prompts.old", false, "", false},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if c.nsOnly && mode == "rules only" {
						t.Skip("a documented limitation without a mount namespace")
					}
					out, code := f.run(t, f.policy(), c.line)
					if (code == 0) != c.ok {
						t.Fatalf("%s: exit code %d, want success %v:\n%s", c.line, code, c.ok, out)
					}
					if c.not != "" && strings.Contains(out, c.not) {
						t.Fatalf("%s: output holds %q:\n%s", c.line, c.not, out)
					}
					if c.name == "no capabilities" && !strings.Contains(out, "0000000000000000") {
						t.Fatalf("capabilities left: %s", out)
					}
				})
			}
			if mode == "rules only" {
				// The documented limitation (pm doctor, pm agents say it): no
				// Landlock right can allow this without allowing it in .git,
				// prompts/ and the state below.
				if out, code := f.run(t, f.policy(), "touch top.txt"); code == 0 {
					t.Errorf("created at the top without a mount namespace: %s", out)
				}
			}
			if data, _ := os.ReadFile(filepath.Join(f.outside, "secret.txt")); string(data) != "top secret\n" {
				t.Fatalf("the outside file was changed: %q", data)
			}
			for _, p := range []string{filepath.Join(f.outside, "new.txt"), filepath.Join(f.ws, ".plasmodium", "evil")} {
				if _, err := os.Stat(p); err == nil {
					t.Fatalf("%s was created", p)
				}
			}
			if _, err := os.Stat(filepath.Join(f.ws, ".plasmodium", "config.json")); err != nil {
				t.Fatalf("the state was removed: %v", err)
			}
			for p, want := range map[string]string{".git/config": "[core]\n\tbare = false\n", ".git/hooks/pre-commit.sample": "#!/bin/sh\n", "prompts/greeter.md": "greeter\n"} {
				if data, err := os.ReadFile(filepath.Join(f.ws, p)); err != nil || string(data) != want {
					t.Errorf("%s changed: %q, %v", p, data, err)
				}
			}
			for _, p := range []string{".git/hooks/pre-commit", "prompts/evil.md", ".git.old", "prompts.old"} {
				if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

// The attacks of TestConfinedCommands do work on an unconfined sh (as this
// user): the test above measures the sandbox, not a harmless machine.
func TestUnconfinedControl(t *testing.T) {
	f := newFixture(t)
	cmd := Unconfined(context.Background(), "cat /proc/"+strconv.Itoa(f.victim)+"/environ; cat .plasmodium/config.json")
	cmd.Dir = f.ws
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "state secret") {
		t.Fatalf("unconfined sh could not read the state: %s", out)
	}
	if !strings.Contains(string(out), "sk-victim") {
		t.Logf("unconfined sh cannot read another process's environ here either: %s", out)
	}
}

func TestDenyNetwork(t *testing.T) {
	requireLandlock(t)
	if ABI() < 4 {
		t.Skip("Landlock ABI < 4 cannot restrict TCP")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			c.Close()
		}
	}()
	f := newFixture(t)
	line := "curl -s --max-time 10 http://" + ln.Addr().String() + "/"
	p := f.policy()
	if out, code := f.run(t, p, line); code != 0 || out != "ok" {
		t.Fatalf("network allowed: exit %d, %q", code, out)
	}
	p.DenyNetwork = true
	if out, code := f.run(t, p, line); code == 0 {
		t.Fatalf("network denied, yet curl got %q", out)
	}
}

func TestCover(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/x", "a/state/s", "b", "c/y"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a", "state"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	dirs, files := cover(dir, []string{filepath.Join(dir, "a", "state")})
	got := strings.Join(append(dirs, files...), " ")
	want := strings.Join([]string{filepath.Join(dir, "c"), filepath.Join(dir, "a", "x"), filepath.Join(dir, "b")}, " ")
	if got != want {
		t.Fatalf("cover: got %s\nwant %s", got, want)
	}
}

func TestConfigured(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	off, on := false, true
	cases := []struct {
		name     string
		network  *bool
		writable []string
		deny     bool
		want     []string
	}{
		{"defaults", nil, nil, false, nil},
		{"network on", &on, nil, false, nil},
		{"network off", &off, nil, true, nil},
		{"writable resolved, relative and missing dropped", nil, []string{dir, "rel/dir", filepath.Join(dir, "missing")}, false, []string{real}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Policy{Workspace: "/w"}.Configured(c.network, c.writable)
			if p.DenyNetwork != c.deny || !slices.Equal(p.Writable, c.want) || p.Workspace != "/w" {
				t.Fatalf("got %+v", p)
			}
		})
	}
}

// An overlay shows another file's content at the target's path to the
// command only; the real file is untouched, and no overlay means the real
// file. Without a mount namespace the helper refuses to run.
func TestOverlay(t *testing.T) {
	requireLandlock(t)
	if Available() != ModeLandlockNS {
		t.Skip("no mount namespace on this machine")
	}
	f := newFixture(t)
	target := filepath.Join(f.ws, "src", "main.go")
	source := filepath.Join(f.outside, "candidate.go")
	if err := os.WriteFile(source, []byte("package candidate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.policy()
	p.Overlay = []Overlay{{Target: target, Source: source}}
	tests := []struct {
		name   string
		policy Policy
		line   string
		want   string
		code   int
	}{
		{"sees the overlay", p, "cat src/main.go", "package candidate\n", 0},
		{"cannot write it", p, "{ echo x > src/main.go; } 2>/dev/null || echo refused", "refused\n", 0},
		{"without overlay", f.policy(), "cat src/main.go", "package main\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := f.run(t, tt.policy, tt.line)
			if out != tt.want || code != tt.code {
				t.Errorf("%s: %q, exit %d; want %q, exit %d", tt.line, out, code, tt.want, tt.code)
			}
			if real, _ := os.ReadFile(target); string(real) != "package main\n" {
				t.Errorf("real file now %q", real)
			}
		})
	}
	t.Run("refused without a mount namespace", func(t *testing.T) {
		withoutMountNS(t)
		out, code := f.run(t, p, "cat src/main.go")
		if code != 126 || !strings.Contains(out, "an overlay needs a mount namespace") {
			t.Errorf("ran without a mount namespace: %q, exit %d", out, code)
		}
	})
}

// A real repository, and a worktree of it (a `.git` file naming a git
// directory elsewhere): git works in the sandbox (diff, status), and
// nothing of the repository's git directories, its hooks directory
// (core.hooksPath in the workspace) or the `.git` file can be written.
func TestGitRepository(t *testing.T) {
	requireLandlock(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, mode := range confinedModes {
		t.Run(mode, func(t *testing.T) {
			setMode(t, mode)
			f := newFixture(t)
			main := filepath.Join(f.outside, "main")
			git(f.outside, "init", "-q", "main")
			if err := os.WriteFile(filepath.Join(main, "tracked.txt"), []byte("one\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(main, ".husky"), 0o755); err != nil {
				t.Fatal(err)
			}
			git(main, "config", "core.hooksPath", ".husky")
			git(main, "add", ".")
			git(main, "commit", "-qm", "one")
			wt := filepath.Join(f.outside, "wt")
			git(main, "worktree", "add", "-q", wt)
			for _, ws := range []string{main, wt} {
				t.Run(filepath.Base(ws), func(t *testing.T) {
					p := New(ws, f.tmp, filepath.Join(ws, ".plasmodium"))
					p.Writable = []string{f.outside} // the worktree's repository lies there: it must stay read-only anyway
					before := snapshot(t, f.outside)
					for _, c := range []struct {
						line string
						ok   bool
					}{
						{"echo two >> tracked.txt && git diff --stat && git status --short", true},
						{"git config core.fsmonitor 'touch /tmp/pwned'", false},
						{`printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> "$(git rev-parse --git-common-dir)/config"`, false},
						{`printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> "$(git rev-parse --git-dir)/config"`, false},
						{`echo 'echo pwned' > "$(git rev-parse --git-common-dir)/hooks/pre-commit"`, false},
						{"echo 'echo pwned' > .husky/pre-commit", false},
						{"echo 'gitdir: /tmp' > .git", false},
						{"git checkout -- tracked.txt 2>/dev/null; git commit -qam sneaky", false},
					} {
						cmd, _ := Command(context.Background(), p, c.line)
						cmd.Dir = ws
						cmd.Env = append(os.Environ(), "TMPDIR="+f.tmp, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a")
						out, err := cmd.CombinedOutput()
						if (err == nil) != c.ok {
							t.Errorf("%s: %v, want success %v:\n%s", c.line, err, c.ok, out)
						}
					}
					if err := os.WriteFile(filepath.Join(ws, "tracked.txt"), []byte("one\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					if after := snapshot(t, f.outside); !maps.Equal(before, after) {
						for k, v := range after {
							if before[k] != v {
								t.Errorf("%s changed", k)
							}
						}
						for k := range before {
							if _, ok := after[k]; !ok {
								t.Errorf("%s removed", k)
							}
						}
					}
				})
			}
		})
	}
}

// snapshot maps every file under dir but git's index (git status may
// refresh it) to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "index" {
			return err
		}
		data, err := os.ReadFile(p)
		m[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// BenchmarkCommand is one confined `true` per mode: what a run_command
// costs in process starts (the spawner adds one).
func BenchmarkCommand(b *testing.B) {
	if ABI() == 0 {
		b.Skip("the kernel offers no Landlock")
	}
	for _, mode := range confinedModes {
		b.Run(mode, func(b *testing.B) {
			f := &fixture{ws: b.TempDir(), tmp: b.TempDir()}
			switch mode {
			case "rules only":
				probe()
				saved := probed.mountNS
				probed.mountNS = false
				defer func() { probed.mountNS = saved }()
			case "spawner, not dumpable":
				probe()
				saved, savedUserNS := probed, userNS
				userNS, probed, probeOnce = true, support{}, sync.Once{}
				defer func() { probed, userNS, probeOnce = saved, savedUserNS, sync.Once{} }()
			}
			if mode != "rules only" && !probe().mountNS {
				b.Skip("no mount namespace")
			}
			p := New(f.ws, f.tmp)
			for b.Loop() {
				cmd, _ := Command(context.Background(), p, "true")
				cmd.Dir = f.ws
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}

// The spawner passes a stop signal sent to it alone on to the command and
// ends as the command did; killed outright, it takes the command with it
// (Pdeathsig): nothing confined outlives it.
func TestSpawnerSignals(t *testing.T) {
	requireLandlock(t)
	reprobe(t, func() { userNS = true })
	if !probe().mountNS {
		t.Skipf("no user namespace here: %s", NoMountNS())
	}
	f := newFixture(t)
	for _, c := range []struct {
		name string
		sig  syscall.Signal
	}{{"SIGTERM passed on", syscall.SIGTERM}, {"SIGKILL takes the command along", syscall.SIGKILL}} {
		t.Run(c.name, func(t *testing.T) {
			token := "pm-cmd-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(int(c.sig))
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			// The shell blocks in a builtin (read from a FIFO nobody writes),
			// so no child of its own holds the token for a moment between a
			// fork and an exec when the test looks (a sleep did, under load).
			cmd, _ := Command(context.Background(), f.policy(), `sh -c 'mkfifo "$TMPDIR/g"; echo started; read x < "$TMPDIR/g"; :' `+splitToken(token))
			cmd.Dir, cmd.Env, cmd.Stdout = f.ws, append(os.Environ(), "TMPDIR="+f.tmp), w
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			line := make([]byte, 8)
			if n, _ := r.Read(line); string(line[:n]) != "started\n" {
				t.Fatalf("read %q", line[:n])
			}
			pidfd, err := unix.PidfdOpen(findProcess(t, token), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(pidfd)
			if err := cmd.Process.Signal(c.sig); err != nil { // the spawner alone
				t.Fatal(err)
			}
			err = cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != c.sig {
				t.Fatalf("spawner ended with %v, want killed by %v", err, c.sig)
			}
			// The command has ended too: its pidfd becomes readable when it exits.
			fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
			if _, err := unix.Poll(fds, -1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A process the command started in a session of its own with an empty
// environment (no marker finds it, no process group holds it) ends when the
// command's top process is killed outright, as when the host that started
// an agent is killed -9: the helper runs in a PID namespace of its own,
// whose PID 1 dies with its parent and takes every process in it along.
// Without a mount namespace there is no PID namespace either: the
// documented gap of rules-only mode (docs/security.md).
func TestNothingOutlivesKilledCommand(t *testing.T) {
	requireLandlock(t)
	for _, mode := range confinedModes[:2] {
		t.Run(mode, func(t *testing.T) {
			setMode(t, mode)
			f := newFixture(t)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			// The process reports its pid (as this side sees it) through a
			// FIFO; the command prints it once it is running.
			token := "pm-bg-" + strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(mode, " ", "")
			// It then blocks in a builtin (read from the FIFO, which nobody
			// writes again): no child of its own holds the token between a
			// fork and an exec when the test looks.
			line := `mkfifo "$TMPDIR/f"; setsid env -i sh -c 'echo up > "$1"; read x < "$1"; :' ` + splitToken(token) + ` "$TMPDIR/f" </dev/null >/dev/null 2>&1 &
read up < "$TMPDIR/f"; echo "$up"; exec sleep 600`
			cmd, _ := Command(context.Background(), f.policy(), line)
			cmd.Dir, cmd.Env, cmd.Stdout = f.ws, append(os.Environ(), "TMPDIR="+f.tmp), w
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			first, err := bufio.NewReader(r).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if first != "up\n" {
				t.Fatalf("first line %q", first)
			}
			killAndWaitGone(t, cmd, findProcess(t, token))
		})
	}
}

// findProcess returns the pid (as this process sees it) of the one process
// whose command line holds token: a confined command sees its own pids in
// a PID namespace of its own, so it cannot report this side's.
func findProcess(t *testing.T, token string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(token)) {
			continue
		}
		if found != 0 {
			t.Fatalf("processes %d and %d both hold %q", found, pid, token)
		}
		found = pid
	}
	if found == 0 {
		t.Fatalf("no process holds %q", token)
	}
	return found
}

// splitToken is token as shell words that make it only when the shell runs
// them, so the command lines that carry the shell's script do not hold it.
func splitToken(token string) string {
	return "'" + token[:3] + "'" + token[3:]
}
