//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Without Landlock a command runs as plain sh, and the warning is given
// once however many commands run.
func TestWithoutLandlockWarnsOnce(t *testing.T) {
	probe()
	saved := probed
	savedWarn := Warn
	var buf bytes.Buffer
	probed.abi, probed.why, Warn, warnOnce = 0, "the kernel offers no Landlock", &buf, sync.Once{}
	t.Cleanup(func() { probed, Warn, warnOnce = saved, savedWarn, sync.Once{} })
	for range 3 {
		cmd, mode := Command(context.Background(), Policy{}, "echo hi")
		// Unconfined: sh itself, or sh under the init of Contain.
		if mode != ModeNone || !slices.Equal(cmd.Args[len(cmd.Args)-3:], []string{"sh", "-c", "echo hi"}) ||
			slices.Contains(cmd.Args, containArg) != Contained() {
			t.Fatalf("mode %q, args %q", mode, cmd.Args)
		}
	}
	if n := strings.Count(buf.String(), "not sandboxed"); n != 1 {
		t.Fatalf("%d warnings:\n%s", n, buf.String())
	}
}

// The helper fails closed: when the policy cannot be applied the command
// does not run, and the exit code is 126.
func TestHelperFailsClosed(t *testing.T) {
	requireLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(Policy{Workspace: t.TempDir(), TempDir: t.TempDir()})
	ownNS, _ := os.Readlink("/proc/self/ns/mnt")
	sameNS, _ := json.Marshal(Policy{Workspace: t.TempDir(), TempDir: t.TempDir(), MountNS: true, ParentMountNS: ownNS})
	noParentNS, _ := json.Marshal(Policy{Workspace: t.TempDir(), TempDir: t.TempDir(), MountNS: true})
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"runs", []string{string(good), "sh", "-c", "echo ran"}, 0, "ran"},
		{"bad policy", []string{"{", "sh", "-c", "echo ran"}, 126, "bad policy"},
		{"no command", []string{string(good)}, 126, "no policy or no command"},
		{"mount in the caller's namespace", []string{string(sameNS), "sh", "-c", "echo ran"}, 126, "refusing to mount"},
		{"mount, caller's namespace unknown", []string{string(noParentNS), "sh", "-c", "echo ran"}, 126, "refusing to mount"},
		{"command missing", []string{string(good), "/nonexistent/cmd"}, 127, "nonexistent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := exec.Command(exe, append([]string{helperArg}, c.args...)...).CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(string(out), c.want) {
				t.Fatalf("exit %d (want %d), output %q (want %q)", code, c.code, out, c.want)
			}
			if c.code != 0 && strings.Contains(string(out), "ran") {
				t.Fatalf("the command ran: %q", out)
			}
		})
	}
}
