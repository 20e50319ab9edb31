package broker

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/plasmodium/pm/internal/driver"
)

// hostEnv makes this test binary a host (TestHelperHost): it listens under
// the directory the variable names, prints its socket and waits.
const hostEnv = "PM_BROKER_TEST_HOST"

func TestHelperHost(t *testing.T) {
	parent := os.Getenv(hostEnv)
	if parent == "" {
		t.Skip("a helper process of TestSweep")
	}
	s, err := Listen(parent, NewToken(), func(context.Context, []string, Stdio) int { return 0 })
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(s.Path)
	select {} // until killed
}

// A host killed outright (kill -9) leaves its socket directory; the next
// host to start removes it, and only the directories of hosts that are
// gone: a live host's stays, a pid now used by another process is not
// taken for the host that had it, a name that is not a host's is left.
func TestSweep(t *testing.T) {
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHost$")
	cmd.Env = append(os.Environ(), hostEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, parent) {
		_ = cmd.Process.Kill()
		t.Fatalf("helper host: %q, %v", line, err)
	}
	killed := filepath.Dir(strings.TrimSpace(line))
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if _, err := os.Stat(killed); err != nil {
		t.Fatalf("the killed host's directory is already gone: %v", err)
	}

	self, err := driver.Self()
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rnd := strings.Repeat("ab", 16)
	live := mk(fmt.Sprintf("%d-%d-%s", self.Pid, self.PidStart, rnd))
	reused := mk(fmt.Sprintf("%d-%d-%s", self.Pid, self.PidStart+1, rnd)) // this pid, another start: that host is gone
	foreign := mk("not-a-host")

	s, err := Listen(parent, NewToken(), func(context.Context, []string, Stdio) int { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		kept bool
	}{{killed, false}, {reused, false}, {live, true}, {foreign, true}, {filepath.Dir(s.Path), true}} {
		_, err := os.Stat(c.dir)
		if kept := err == nil; kept != c.kept {
			t.Errorf("%s: kept %v, want %v", filepath.Base(c.dir), kept, c.kept)
		}
	}
	s.Close()
	if _, err := os.Stat(filepath.Dir(s.Path)); !os.IsNotExist(err) {
		t.Errorf("a closed host left its directory: %v", err)
	}
}

// RunDir is this user's, private, and never a directory it cannot trust.
func TestRunDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	want := filepath.Join(tmp, "pm-"+strconv.Itoa(os.Geteuid()))
	if len(want) > maxRunDir {
		t.Skipf("the test's temporary directory %s is too long to hold the run directory", tmp)
	}
	dir, err := RunDir()
	if err != nil || dir != want {
		t.Fatalf("RunDir: %q, %v; want %q", dir, err, want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("RunDir made %v (%v), want 0700", st.Mode(), err)
	}
	s, err := Listen("", NewToken(), func(context.Context, []string, Stdio) int { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(filepath.Dir(s.Path)) != dir || len(s.Path) > maxSocketPath {
		t.Errorf("socket %s is not in its own directory under %s", s.Path, dir)
	}
	s.Close()
	if h := Hidden("/state"); len(h) != 2 || h[0] != "/state" || h[1] != dir {
		t.Errorf("Hidden: %q, want the state and %s", h, dir)
	}

	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RunDir(); err == nil || !strings.Contains(err.Error(), "not a private directory") {
		t.Errorf("a 0755 run directory: %v", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := RunDir(); err == nil || !strings.Contains(err.Error(), "not a private directory") {
		t.Errorf("a symlink for the run directory: %v", err)
	}
	if h := Hidden("/state"); len(h) != 1 || h[0] != "/state" {
		t.Errorf("Hidden with no usable run directory: %q", h)
	}
}
