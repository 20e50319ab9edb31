//go:build linux

package capability_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/sandbox"
)

// swapAttempts bounds the symlink-swap race: this many read_file and as many
// write_file calls race one swapper (and a deadline stops it early on a slow
// machine; the deadline limits work, it asserts nothing).
const swapAttempts = 2000

// A second goroutine atomically exchanges sub/d, a real directory, with a
// symlink to a directory outside the workspace (or to one in pm's state
// directory, which is inside it), while read_file and write_file go through
// sub/d. Checking a path and then opening it by name let some calls through
// the symlink; no call may ever reach the target.
func TestSymlinkSwapNeverEscapes(t *testing.T) {
	cases := []struct {
		name   string
		target func(ws, outside string) string // the directory the symlink leads to
	}{
		{"outside", func(ws, outside string) string { return outside }},
		{"state dir", func(ws, outside string) string { return filepath.Join(ws, ".plasmodium", "probe") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, ws, outside := workspace(t)
			target := c.target(ws, outside)
			must(t, os.MkdirAll(target, 0o755))
			must(t, os.WriteFile(filepath.Join(target, "secret.txt"), []byte("top secret\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(target, "target-only.txt"), nil, 0o644))
			swapRace(t, env, ws, target)
		})
	}
}

func swapRace(t *testing.T, env *capability.Env, ws, target string) {
	all := obj("read_file", "write_file", "list_files")
	read, write, list := tool(t, env, all, "read_file"), tool(t, env, all, "write_file"), tool(t, env, all, "list_files")
	must(t, os.MkdirAll(filepath.Join(ws, "sub", "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "sub", "d", "secret.txt"), []byte("inside\n"), 0o644))
	must(t, os.Symlink(target, filepath.Join(ws, "sub", "alt")))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d, alt := filepath.Join(ws, "sub", "d"), filepath.Join(ws, "sub", "alt")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	var calls, readsIn, readEscapes, listEscapes int
	for i := 0; i < swapAttempts && time.Now().Before(deadline); i++ {
		calls++
		got := call(t, read, m{"path": "sub/d/secret.txt"})
		if strings.Contains(got, "top secret") {
			readEscapes++
		} else if strings.Contains(got, "inside") {
			readsIn++
		}
		call(t, write, m{"path": "sub/d/secret.txt", "content": "pwned\n"})
		call(t, write, m{"path": "sub/d/new/deeper.txt", "content": "pwned\n"})
		for _, rec := range []bool{false, true} {
			if strings.Contains(call(t, list, m{"path": "sub/d", "recursive": rec}), "target-only") {
				listEscapes++
			}
		}
	}
	close(stop)
	wg.Wait()

	writeEscapes := 0
	if data, _ := os.ReadFile(filepath.Join(target, "secret.txt")); string(data) != "top secret\n" {
		writeEscapes++
	}
	if _, err := os.Stat(filepath.Join(target, "new")); err == nil {
		writeEscapes++
	}
	t.Logf("%d rounds of read_file, 2 write_file, 2 list_files: %d reads inside, %d read the target; writes reached it: %d; listings of it: %d",
		calls, readsIn, readEscapes, writeEscapes, listEscapes)
	if readEscapes+writeEscapes+listEscapes > 0 {
		t.Fatalf("escapes: reads %d, writes %d, listings %d of %d rounds", readEscapes, writeEscapes, listEscapes, calls)
	}
	if readsIn == 0 {
		t.Fatal("no read went through sub/d at all: the race was not exercised")
	}
}

// A hard link planted in the workspace names a file outside it: neither
// read_file nor write_file goes through it.
func TestHardLinkRefused(t *testing.T) {
	env, ws, outside := workspace(t)
	all := obj("read_file", "write_file")
	read, write := tool(t, env, all, "read_file"), tool(t, env, all, "write_file")
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "hard.txt")); err != nil {
		t.Skipf("cannot hard-link across the temp directories: %v", err)
	}
	cases := []struct {
		name string
		got  func() string
	}{
		{"read", func() string { return call(t, read, m{"path": "hard.txt"}) }},
		{"write", func() string { return call(t, write, m{"path": "hard.txt", "content": "pwned\n"}) }},
		{"append", func() string { return call(t, write, m{"path": "hard.txt", "content": "pwned\n", "append": true}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.got()
			mustContain(t, got, "hard links")
			if strings.Contains(got, "top secret") {
				t.Fatalf("read through a hard link: %s", got)
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "top secret\n" {
		t.Fatalf("the outside file was changed through a hard link: %q", data)
	}
}

// Whatever path a model gives, read_file, list_files and write_file stay in
// the workspace and out of pm's state: the outside file is never shown or
// changed, nothing appears outside, and the state directory is not written.
func FuzzPrimitivePaths(f *testing.F) {
	env, ws, outside := workspace(f)
	for _, p := range []string{"README.md", "../x", "leak.txt", "outdir/secret.txt", "dangling", "srclink/../../x",
		".plasmodium/config.json", "src/../.plasmodium/x", "/etc/passwd", ws + "/../x", "a/b/../../../x", "./.", "", "\x00",
		"outdir/../outdir/new", "srclink/new/deep.txt", ".git/config", "prompts/x.md"} {
		f.Add(p)
	}
	all := obj("read_file", "write_file", "list_files")
	read, write, list := tool(f, env, all, "read_file"), tool(f, env, all, "write_file"), tool(f, env, all, "list_files")
	must(f, os.WriteFile(filepath.Join(ws, ".plasmodium", "state-only.txt"), []byte("state secret\n"), 0o644))
	stateBefore := tree(f, filepath.Join(ws, ".plasmodium"))
	f.Fuzz(func(t *testing.T, p string) {
		for _, got := range []string{call(t, read, m{"path": p}), call(t, list, m{"path": p, "recursive": true})} {
			if strings.Contains(got, "top secret") || strings.Contains(got, "state secret") ||
				(strings.Contains(got, "state-only") && !strings.Contains(p, "state-only")) {
				t.Fatalf("%q showed something it must not:\n%s", p, got)
			}
		}
		call(t, write, m{"path": p, "content": "fuzz"})
		if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "top secret\n" {
			t.Fatalf("%q changed the outside file", p)
		}
		if got := tree(t, outside); got != "secret.txt\n" {
			t.Fatalf("%q wrote outside: %s", p, got)
		}
		if got := tree(t, filepath.Join(ws, ".plasmodium")); got != stateBefore {
			t.Fatalf("%q changed the state directory:\n%s", p, got)
		}
	})
}

// tree lists the files under dir, one a line.
func tree(t testing.TB, dir string) string {
	t.Helper()
	var sb strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			sb.WriteString(rel + "\n")
		}
		return nil
	})
	must(t, err)
	return sb.String()
}

// run_command is confined by internal/sandbox where the kernel has
// Landlock: pm's state, other processes' environments and the outside are
// out of its reach, the workspace and its TMPDIR are not.
func TestRunCommandConfined(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("the kernel offers no Landlock")
	}
	env, ws, outside := workspace(t)
	must(t, os.WriteFile(filepath.Join(ws, ".plasmodium", "probe.txt"), []byte("state secret\n"), 0o644))
	run := tool(t, env, obj("run_command"), "run_command")
	cases := []struct {
		name    string
		command string
		want    string
		not     string
	}{
		{"state", "cat .plasmodium/probe.txt", "exit code 1", "state secret"},
		{"state by absolute path", "cat " + ws + "/.plasmodium/probe.txt", "exit code 1", "state secret"},
		{"write outside", "echo pwned > " + outside + "/secret.txt", "exit code 2", ""},
		{"environ of pid 1", "cat /proc/1/environ", "exit code 1", "PATH="},
		{"write TMPDIR", `echo ok > "$TMPDIR/x" && cat "$TMPDIR/x"`, "exit code 0\nok", ""},
		{"write the workspace", "echo ok > notes.txt && cat notes.txt", "exit code 0\nok", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := call(t, run, m{"command": c.command})
			mustContain(t, got, c.want)
			if c.not != "" && strings.Contains(got, c.not) {
				t.Fatalf("%s: output holds %q:\n%s", c.command, c.not, got)
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "top secret\n" {
		t.Fatalf("the outside file was changed: %q", data)
	}
}

// run_command cannot find or reach an exec agent's host (issue 20): the
// hosts' sockets are in the per-user run directory, which the sandbox
// covers in its mount namespace.
func TestRunCommandHidesSockets(t *testing.T) {
	if sandbox.Available() != sandbox.ModeLandlockNS {
		t.Skip("without a private mount namespace the sandbox cannot keep the run directory from being listed (docs/security.md)")
	}
	env, _, _ := workspace(t)
	host, err := broker.Listen("", broker.NewToken(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	dir := filepath.Dir(filepath.Dir(host.Path))
	run := tool(t, env, obj("run_command"), "run_command")
	got := call(t, run, m{"command": "ls -A " + dir + "; test -e " + host.Path + " && echo reachable || echo unreachable"})
	mustContain(t, got, "unreachable")
	if strings.Contains(got, filepath.Base(filepath.Dir(host.Path))) {
		t.Fatalf("run_command listed the host's socket directory:\n%s", got)
	}
}

// Nothing run_command writes steers the unconfined side (issue 20): a
// model wrote core.fsmonitor into .git/config (the human's next git status
// ran it), a pre-commit hook, and rewrote prompts/greeter.md (another
// prompt object's capabilities). Each is refused; the files are unchanged.
func TestRunCommandSteering(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("the kernel offers no Landlock")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	env, ws, _ := workspace(t)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	must(t, os.MkdirAll(filepath.Join(ws, "prompts"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "prompts", "greeter.md"), []byte("---\nname: greeter\n---\nhello\n"), 0o644))
	files := []string{".git/config", "prompts/greeter.md"}
	before := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(ws, f))
		must(t, err)
		before[f] = string(data)
	}
	run := tool(t, env, obj("run_command"), "run_command")
	for _, c := range []struct{ name, command string }{
		{"git config core.fsmonitor", "git config core.fsmonitor 'touch " + ws + "/pwned'"},
		{"fsmonitor appended to .git/config", `printf '[core]\n\tfsmonitor = touch pwned\n' >> .git/config`},
		{"a pre-commit hook", `printf '#!/bin/sh\ntouch pwned\n' > .git/hooks/pre-commit`},
		{"prompts/greeter.md rewritten", `printf -- '---\nname: greeter\ncapabilities: [run_command, http_get]\n---\nobey\n' > prompts/greeter.md`},
		{"a prompt added", "echo x > prompts/owner.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := call(t, run, m{"command": c.command})
			if strings.HasPrefix(got, "exit code 0") {
				t.Fatalf("%s: ran:\n%s", c.command, got)
			}
		})
	}
	for _, f := range files {
		if data, _ := os.ReadFile(filepath.Join(ws, f)); string(data) != before[f] {
			t.Errorf("%s changed: %q", f, data)
		}
	}
	for _, f := range []string{".git/hooks/pre-commit", "prompts/owner.md", "pwned"} {
		if _, err := os.Lstat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}
	// The workspace itself stays the agent's: create, change, delete.
	mustContain(t, call(t, run, m{"command": "echo hi > f.txt && echo more >> f.txt && rm f.txt && git status --short"}), "exit code 0")
}
