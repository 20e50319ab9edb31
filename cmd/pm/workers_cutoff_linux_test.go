package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nats-io/nats.go"

	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/room"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/testproc"
)

// The worker cut-off test (issue 24): a three-node cluster and three
// workers, real pm-full processes in project directories of their own.
// w2 and w3 reach the cluster on this namespace's loopback; w1 runs in a
// network namespace of its own, joined to node n1 only by a veth link,
// the way a machine reaches the cluster through its one network. The cut
// is that link going down: w1's connection is not closed, its packets are
// lost. The test runs in user and network namespaces of its own (so it
// needs no root), as internal/natsx/lease's TestCutOffHolderInNetns does.
const (
	wkNetnsEnv  = "PM_WORKERS_NETNS" // "world" inside the namespaces
	wkWorldAddr = "10.231.9.1"
	wkW1Net     = "10.231.9.2/24"
	wkUser      = "pm"
	wkPass      = "workers-netns-test-password-0123"
)

// wkAgent is the agents' program: it takes its agent's lock for its life
// (a second live process of the agent cannot, and notes the duplicate),
// notes "AGENT WORKER PID" in ran, then says in the room named in
// $W/room each word the test writes to its fifo ($W/go.AGENT.WORKER),
// noting the attempt and the say's exit in said.
const wkAgent = `W=$(dirname "$0")
where=$(basename "$PWD")
exec 9>>"$W/live/$PM_AGENT.lock"
if ! flock -n 9; then
  echo "$PM_AGENT on $where while another lives" >>"$W/duplicates"
  exit 1
fi
# The run's own lock, held for its life: the test waits on it to know
# this run's process is gone (pids inside the agent's pid namespace are
# not the test's).
exec 8>>"$W/live/$PM_AGENT.$where.lock"
flock -n 8 || echo "$PM_AGENT twice on $where" >>"$W/duplicates"
echo "$PM_AGENT $where $$" >>"$W/ran"
fifo="$W/go.$PM_AGENT.$where"
mkfifo "$fifo" 2>/dev/null
while :; do
  read word <"$fifo" || continue
  echo "$PM_AGENT $where $word attempt" >>"$W/said"
  pm say "$word from $where" --phase "$(cat "$W/room")"
  echo "$PM_AGENT $where $word exit $?" >>"$W/said"
done
`

// TestWorkerCutOffIsFenced: w1 runs agent A; w1's link goes down. A's
// process on w1 is stopped by its host (fenced: no renewal of A's lease
// answered), a say A attempts after the cut never reaches the room, and A
// runs on w2 or w3, exactly once, never beside the old process. The link
// back, w1 registers again and does not run A. Then the worker running A
// is killed -9: A runs on another worker, once, never two at once.
// Counted by the agent's own marker files and pids, never by timing.
func TestWorkerCutOffIsFenced(t *testing.T) {
	if os.Getenv(wkNetnsEnv) == "world" {
		workersWorld(t)
		return
	}
	testproc.RerunInNetns(t, "TestWorkerCutOffIsFenced", wkNetnsEnv+"=world", "PM_TEST_PREBUILT="+filepath.Dir(pmBin))
}

// wkDir is one machine's project directory.
type wkDir struct {
	t              *testing.T
	dir, home, tmp string
}

// env is the machine's environment. TMPDIR is the test's own: in the user
// namespace this test's user is uid 0, and a /tmp/pm-0 of the real root
// (the brokers' directory) is not its.
func (m wkDir) env() []string {
	return []string{"PATH=" + filepath.Dir(pmBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + m.home, "TMPDIR=" + m.tmp, "NATS_PASSWORD=" + wkPass, "GORACE=atexit_sleep_ms=0"}
}

func (m wkDir) must(args ...string) string {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sayBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(pmBin), "pm-full"), args...)
	cmd.Dir, cmd.Env = m.dir, append(m.env(), "PM_NO_SUPERVISOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		m.t.Fatalf("pm %s (in %s): %v\n%s", strings.Join(args, " "), m.dir, err, errb.String())
	}
	return out.String()
}

// worker starts pm worker NAME in m, its output in WORK/NAME.out and
// .err; netns puts it in a network namespace of its own, where it waits
// for a line on stdin (its link moved in) before it sets its link up.
func (m wkDir) worker(work, name string, netns bool) (*exec.Cmd, io.WriteCloser) {
	m.t.Helper()
	out, err := os.Create(filepath.Join(work, name+".out"))
	if err != nil {
		m.t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(work, name+".err"))
	if err != nil {
		m.t.Fatal(err)
	}
	full := filepath.Join(filepath.Dir(pmBin), "pm-full")
	cmd := exec.Command(full, "worker", "--name", name, "--capacity", "2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdin io.WriteCloser
	if netns {
		cmd = exec.Command("sh", "-c", `read x && ip link set lo up && ip addr add `+wkW1Net+` dev veth-a && ip link set veth-a up && exec "$0" worker --name `+name+` --capacity 2`, full)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
		if stdin, err = cmd.StdinPipe(); err != nil {
			m.t.Fatal(err)
		}
	}
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = m.dir, m.env(), out, errf
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		out.Close()
		errf.Close()
	})
	return cmd, stdin
}

// wkWait waits, bounded by ctx, until path's content matches re (the
// scripts' waitfor: the file is what the processes write), and returns
// the match's groups.
func wkWait(ctx context.Context, t *testing.T, path, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for {
		data, _ := os.ReadFile(path)
		if m := rx.FindStringSubmatch(string(data)); m != nil {
			return m
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s in %s: %v; it holds:\n%s", re, path, ctx.Err(), data)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wkGone waits, bounded by ctx, until the run of agent on worker is gone:
// it held its lock file (live/AGENT.WORKER.lock) for its life, so a
// blocking flock returns once its last process has ended (the kernel's
// wake-up, not a look every so often).
func wkGone(ctx context.Context, t *testing.T, work, agent, worker string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(work, "live", agent+"."+worker+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make(chan error, 1)
	go func() { got <- unix.Flock(int(f.Fd()), unix.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("flock %s: %v", f.Name(), err)
		}
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	case <-ctx.Done():
		f.Close() // ends the flock's wait with the test
		t.Fatalf("the run of %s on %s still holds its lock: its process lives", agent, worker)
	}
}

// wkSay writes word to the fifo of agent's run on worker: the agent says
// it in the room. The fifo is opened without blocking, so a run with no
// reader yet (it makes the fifo after it noted its start, and reopens it
// after each say) is tried again, bounded: its open announces nothing.
func wkSay(t *testing.T, work, agent, worker, word string) {
	t.Helper()
	fifo := filepath.Join(work, "go."+agent+"."+worker)
	for range 1500 {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if errors.Is(err, unix.ENXIO) || errors.Is(err, os.ErrNotExist) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("the agent's fifo %s: %v", fifo, err)
		}
		_, err = fmt.Fprintln(f, word)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no reader on %s", fifo)
}

// wkWaitN waits, bounded by ctx, until path holds n matches of re, and
// returns them.
func wkWaitN(ctx context.Context, t *testing.T, path, re string, n int) [][]string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for {
		data, _ := os.ReadFile(path)
		if m := rx.FindAllStringSubmatch(string(data), -1); len(m) >= n {
			return m
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %d of %s in %s: %v; it holds:\n%s", n, re, path, ctx.Err(), data)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wkLines counts the lines of path that match re.
func wkLines(path, re string) int {
	data, _ := os.ReadFile(path)
	return len(regexp.MustCompile(re).FindAllString(string(data), -1))
}

func workersWorld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	testproc.IP(t, "link", "set", "lo", "up")
	testproc.IP(t, "link", "add", "veth-w", "type", "veth", "peer", "name", "veth-a")
	testproc.IP(t, "addr", "add", wkWorldAddr+"/24", "dev", "veth-w")
	testproc.IP(t, "link", "set", "veth-w", "up")
	// n1 listens on the link (w1's one way in), so it needs credentials; so
	// do all.
	h := hubtest.ThreeWith(t, func(c *hub.Config) {
		c.Auth = hub.Auth{User: wkUser, Password: wkPass}
		if c.Name == "n1" {
			c.Listen = wkWorldAddr + ":0"
		}
	})
	h.WaitCurrent(ctx) // a meta leader, every node current
	work := t.TempDir()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(work, "w*", ".plasmodium", "logs", "*.log"))
		for _, f := range append([]string{"w1.out", "w1.err", "w2.out", "w2.err", "w3.out", "w3.err", "ran", "said"}, logs...) {
			if !filepath.IsAbs(f) {
				f = filepath.Join(work, f)
			}
			data, _ := os.ReadFile(f)
			if len(data) > 3000 {
				data = data[len(data)-3000:]
			}
			t.Logf("%s:\n%s", f, data)
		}
	})
	for _, d := range []string{"live"} {
		if err := os.Mkdir(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "agent.sh"), []byte(wkAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "wk") // short: the brokers' sockets live under it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dirs := map[string]wkDir{}
	for _, name := range []string{"d", "w1", "w2", "w3"} {
		dir := filepath.Join(work, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs[name] = wkDir{t: t, dir: dir, home: t.TempDir(), tmp: tmp}
	}
	// d (commands only), w2 and w3 name their own node first; w1 names n1,
	// the one it reaches.
	urls := map[string]string{
		"d":  strings.Join([]string{h.URL(1), h.URL(2), h.URL(0)}, ","),
		"w1": h.URL(0),
		"w2": strings.Join([]string{h.URL(1), h.URL(2), h.URL(0)}, ","),
		"w3": strings.Join([]string{h.URL(2), h.URL(1), h.URL(0)}, ","),
	}
	d := dirs["d"]
	d.must("init", "--store", urls["d"], "--user", wkUser)
	project := strings.TrimSpace(d.must("config", "get", "store.project"))
	for _, name := range []string{"d", "w1", "w2", "w3"} {
		m := dirs[name]
		if name != "d" {
			m.must("init", "--store", urls[name], "--user", wkUser, "--project", project)
		}
		m.must("config", "set", "store.lease_seconds", "5") // the bucket takes d's: 2 s let one late renewal under -race start A once more
		m.must("config", "set", "runtime.exec.sandbox", "false")
		m.must("config", "set", "runtime.exec.command", `["sh","`+filepath.Join(work, "agent.sh")+`"]`)
	}

	// The project's workers and leases buckets, made once before three
	// workers race to make them.
	if got := d.must("workers"); !strings.Contains(got, "no worker registered") {
		t.Fatalf("pm workers before any: %s", got)
	}
	w1, w1in := dirs["w1"].worker(work, "w1", true)
	testproc.IP(t, "link", "set", "veth-a", "netns", strconv.Itoa(w1.Process.Pid))
	if _, err := fmt.Fprintln(w1in, "link moved in"); err != nil {
		t.Fatal(err)
	}
	workers := map[string]*exec.Cmd{"w1": w1}
	workers["w2"], _ = dirs["w2"].worker(work, "w2", false)
	workers["w3"], _ = dirs["w3"].worker(work, "w3", false)
	for _, name := range []string{"w1", "w2", "w3"} {
		wkWait(ctx, t, filepath.Join(work, name+".err"), "worker started")
	}

	// A task on w1, and a room its owner A says in.
	var tk struct{ ID, Owner string }
	if err := json.Unmarshal([]byte(d.must("task", "Cut off", "--runtime", "exec", "--on", "w1", "--json")), &tk); err != nil {
		t.Fatal(err)
	}
	var ph struct{ ID string }
	if err := json.Unmarshal([]byte(d.must("phase", "Talk", "--task", tk.ID, "--limit", "20", "--json")), &ph); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "room"), []byte(ph.ID), 0o644); err != nil {
		t.Fatal(err)
	}
	ran, said := filepath.Join(work, "ran"), filepath.Join(work, "said")
	a := tk.Owner
	wkWait(ctx, t, ran, `(?m)^`+a+` w1 \d+$`)
	wkSay(t, work, a, "w1", "before")
	wkWait(ctx, t, said, `(?m)^`+a+` w1 before exit 0$`)

	// The cut. A says once more, after it: never stored. Its host, whose
	// renewals go unanswered, stops it.
	testproc.IP(t, "link", "set", "veth-w", "down")
	wkSay(t, work, a, "w1", "after")
	wkWait(ctx, t, said, `(?m)^`+a+` w1 after attempt$`)
	wkGone(ctx, t, work, a, "w1")
	t.Logf("w1 cut off: A's process there is gone")

	// A runs on w2 or w3, once; it says there.
	m := wkWait(ctx, t, ran, `(?m)^`+a+` (w[23]) (\d+)$`)
	moved := m[1]
	t.Logf("A runs on %s", moved)
	wkSay(t, work, a, moved, "moved")
	wkWait(ctx, t, said, `(?m)^`+a+` `+moved+` moved exit 0$`)
	if n := wkLines(ran, `(?m)^`+a+` `); n != 2 {
		t.Fatalf("A started %d times by now, want 2 (w1, then %s)", n, moved)
	}

	// The link back: w1 registers again (its key expired meanwhile).
	testproc.IP(t, "link", "set", "veth-w", "up")
	wkWait(ctx, t, filepath.Join(work, "w1.err"), "registering again")

	// The worker running A killed -9: A runs on another worker, once.
	if err := workers[moved].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = workers[moved].Wait()
	wkGone(ctx, t, work, a, moved) // its host died with it, and the agent with the host
	third := wkWaitN(ctx, t, ran, `(?m)^`+a+` (w[123]) (\d+)$`, 3)[2][1]
	if third == moved {
		t.Fatalf("A ran again on %s, the worker killed -9", moved)
	}
	t.Logf("%s killed -9: A runs on %s", moved, third)
	wkSay(t, work, a, third, "third")
	wkWait(ctx, t, said, `(?m)^`+a+` `+third+` third exit 0$`)

	// Never two at once, three starts in all, and the room holds every
	// say that exited 0 and none of the cut-off host's.
	if data, err := os.ReadFile(filepath.Join(work, "duplicates")); err == nil {
		t.Fatalf("a second live process of an agent:\n%s", data)
	}
	if n := wkLines(ran, `(?m)^`+a+` `); n != 3 {
		data, _ := os.ReadFile(ran)
		t.Fatalf("A started %d times, want 3:\n%s", n, data)
	}
	if n := wkLines(said, `(?m)^`+a+` w1 after exit 0$`); n != 0 {
		t.Fatal("the cut-off host's say exited 0")
	}
	names, err := natsx.ProjectNames(project)
	if err != nil {
		t.Fatal(err)
	}
	c, err := natsx.Connect(ctx, h.URL(1), nats.UserInfo(wkUser, wkPass))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rs, err := room.OpenNamed(ctx, c, names.Rooms, names.RoomPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := rs.Read(ctx, tk.ID+"."+ph.ID, func(m room.Message) error {
		var msg store.Message
		if err := json.Unmarshal(m.Data, &msg); err != nil {
			return err
		}
		got = append(got, msg.Content)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"before from w1", "moved from " + moved, "third from " + third}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the room holds %q, want %q", got, want)
	}
}
