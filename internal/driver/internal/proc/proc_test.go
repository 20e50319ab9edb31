//go:build linux

package proc

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hang is a generous bound for waits that end on a kernel event; it only
// keeps a broken test from hanging.
const hang = time.Minute

// waitExit is Wait with a timeout, reporting whether the process is gone.
func waitExit(pid int, start uint64, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return Wait(ctx, pid, start) == nil
}

// killGroup is StopGroup with a grace period instead of a context.
func killGroup(pid int, start uint64, grace time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return StopGroup(ctx, pid, start)
}

func stateOf(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f, err := statFields(data)
	if err != nil {
		t.Fatal(err)
	}
	return string(f[0])
}

func TestStatFields(t *testing.T) {
	tail := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21\n"
	tests := []struct {
		name string
		data string
		ok   bool
	}{
		{"plain", "123 (sleep)" + tail, true},
		{"spaces and parens in comm", "123 (a) b (c))" + tail, true},
		{"no paren", "123 sleep S 1", false},
		{"too few fields", "123 (x) S 1 2 3\n", false},
		{"paren at the end", "123 (x)", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := statFields([]byte(tt.data))
			if (err == nil) != tt.ok {
				t.Fatalf("statFields = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && (string(f[0]) != "S" || string(f[19]) != "4242") {
				t.Fatalf("state %q, start %q", f[0], f[19])
			}
		})
	}
}

func TestSelf(t *testing.T) {
	pid := os.Getpid()
	start, err := StartTime(pid)
	if err != nil || start == 0 {
		t.Fatalf("StartTime(self) = %d, %v", start, err)
	}
	again, _ := StartTime(pid)
	if again != start {
		t.Fatalf("StartTime changed: %d then %d", start, again)
	}
	tests := []struct {
		name  string
		pid   int
		start uint64
		want  bool
	}{
		{"self with its start", pid, start, true},
		{"self, start unknown", pid, 0, true},
		{"self with a wrong start (a recycled pid)", pid, start + 1, false},
		{"pid 0", 0, 0, false},
		{"negative pid", -1, 0, false},
		{"no such pid", 1 << 30, 0, false},
	}
	for _, tt := range tests {
		if got := Alive(tt.pid, tt.start); got != tt.want {
			t.Errorf("%s: Alive(%d, %d) = %v, want %v", tt.name, tt.pid, tt.start, got, tt.want)
		}
	}
	if _, err := StartTime(1 << 30); err == nil {
		t.Error("StartTime of a missing pid succeeded")
	}
}

func TestChildLifecycle(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	start, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := StartTime(os.Getpid())
	if start < self {
		t.Fatalf("child started (%d) before its parent (%d)", start, self)
	}
	if !Alive(pid, start) {
		t.Fatal("running child not alive")
	}
	if Alive(pid, start+1) {
		t.Fatal("child alive under a wrong start time")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // reaped
	if Alive(pid, start) || Alive(pid, 0) {
		t.Fatal("exited and reaped child still alive")
	}
	if !waitExit(pid, start, hang) {
		t.Fatal("WaitExit on a gone pid reported it alive")
	}
}

func TestZombieIsNotAlive(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	start, _ := StartTime(pid) // may fail if it is already a zombie; 0 then
	// WaitExit polls a pidfd, which is ready once the child exits, before
	// anyone reaps it: the child is a zombie now.
	if !waitExit(pid, start, hang) {
		t.Fatal("WaitExit did not see the child exit")
	}
	if st := stateOf(t, pid); st != "Z" {
		t.Fatalf("child state %q, want a zombie", st)
	}
	if Alive(pid, start) || Alive(pid, 0) {
		t.Fatal("zombie reported alive")
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("reaping the zombie: %v", err)
	}
}

func TestWaitExitTimesOutOnLiveProcess(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	start, _ := StartTime(cmd.Process.Pid)
	if waitExit(cmd.Process.Pid, start, 20*time.Millisecond) {
		t.Fatal("WaitExit reported a sleeping process gone")
	}
}

// startGroup starts `sh -c 'sleep 300 & echo $!; sleep 300'` as the leader of
// a new process group and returns it with the background sleep's pid, read
// once sh has forked it.
func startGroup(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; sleep 300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	member, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	return cmd, member
}

func TestKillGroup(t *testing.T) {
	cmd, member := startGroup(t)
	pid := cmd.Process.Pid
	start, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	mstart, err := StartTime(member)
	if err != nil {
		t.Fatal(err)
	}
	if !GroupAlive(pid) {
		t.Fatal("GroupAlive false for a running group")
	}
	killed, err := killGroup(pid, start, 5*time.Second)
	if err != nil || !killed {
		t.Fatalf("KillGroup = %v, %v", killed, err)
	}
	_ = cmd.Wait() // reap the leader
	if !waitExit(member, mstart, hang) || Alive(member, mstart) {
		t.Fatal("group member survived KillGroup")
	}
	if Alive(pid, start) {
		t.Fatal("group leader survived KillGroup")
	}
}

// A recorded pid whose start time no longer matches names some other process
// (the pid was recycled): KillGroup must leave it and its group alone.
func TestKillGroupWrongStartTimeLeavesProcessAlone(t *testing.T) {
	cmd, member := startGroup(t)
	pid := cmd.Process.Pid
	start, _ := StartTime(pid)
	mstart, _ := StartTime(member)
	killed, err := killGroup(pid, start+1, 5*time.Second)
	if err != nil || killed {
		t.Fatalf("KillGroup with a wrong start time = %v, %v; want nothing killed", killed, err)
	}
	if !Alive(pid, start) || !Alive(member, mstart) {
		t.Fatal("KillGroup with a wrong start time killed the process or its group")
	}
}

// The leader has exited but a member lingers in its group: KillGroup ends it.
func TestKillGroupLeaderGoneMemberLingers(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.Output() // sh exits after printing; Output reaps it
	if err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	member, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	mstart, err := StartTime(member)
	if err != nil {
		t.Fatal(err)
	}
	if !GroupAlive(pid) {
		t.Fatal("group with a live member reported empty")
	}
	killed, err := killGroup(pid, 12345, time.Second) // the leader and its pid are gone
	if err != nil || !killed {
		t.Fatalf("KillGroup = %v, %v; want the lingering member killed", killed, err)
	}
	if !waitExit(member, mstart, hang) || Alive(member, mstart) {
		t.Fatal("lingering member survived")
	}
}

func TestKillGroupNothingThere(t *testing.T) {
	killed, err := killGroup(1<<30, 1, time.Second)
	if err != nil || killed {
		t.Fatalf("KillGroup of a missing pid = %v, %v", killed, err)
	}
	killed, err = killGroup(0, 0, time.Second)
	if err != nil || killed {
		t.Fatalf("killGroup(0) = %v, %v; must never signal our own group", killed, err)
	}
}

// A record without a start time (hand-edited, or from a broken writer) names
// no process we can verify: nothing is signalled, the group lives on.
func TestMissingStartTimeIsNeverSignalled(t *testing.T) {
	cmd, member := startGroup(t)
	pid := cmd.Process.Pid
	start, _ := StartTime(pid)
	mstart, _ := StartTime(member)
	if killed, err := killGroup(pid, 0, 5*time.Second); killed || err == nil {
		t.Errorf("StopGroup with start 0 = %v, %v; want refused", killed, err)
	}
	if err := Signal(pid, 0, syscall.SIGTERM); err == nil {
		t.Error("Signal with start 0 was sent")
	}
	if !Alive(pid, start) || !Alive(member, mstart) {
		t.Fatal("a process with no recorded start time was signalled")
	}
}

// Pid 1 and negative pids are never signalled, whatever start time a record
// claims: -1 is every process we may signal. (Pid 0, an agent never started,
// is TestKillGroupNothingThere: nothing to stop, our own group untouched.)
func TestPidZeroAndOneAreNeverSignalled(t *testing.T) {
	for _, pid := range []int{-1, 1} {
		start, _ := StartTime(1)
		if killed, err := killGroup(pid, start, time.Second); killed || !errors.Is(err, ErrUnverified) {
			t.Errorf("StopGroup(%d) = %v, %v; want ErrUnverified", pid, killed, err)
		}
		if err := Signal(pid, start, syscall.Signal(0)); !errors.Is(err, ErrUnverified) {
			t.Errorf("Signal(%d) = %v; want ErrUnverified", pid, err)
		}
	}
}
