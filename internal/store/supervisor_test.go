//go:build linux

package store_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/store"
)

// holdSupervisorLock makes a child process the only holder of the
// supervisor lock, through a descriptor it inherited: what a child forked a
// moment before its supervisor was killed holds until its exec, and what a
// dying supervisor holds until its last thread is gone. release ends it.
func holdSupervisorLock(t *testing.T, s *store.Store) (pid int, release func()) {
	t.Helper()
	f, err := os.OpenFile(lockedfile.LockPath(s.SupervisorLockPath()), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "1000")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close() // the child's copy keeps the lock
	done := false
	release = func() {
		if !done {
			done = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(release)
	return cmd.Process.Pid, release
}

// deadPid is the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A supervisor lock held by a process that is not the live supervisor
// recorded in supervisor.json (the one that held it was killed and is still
// going, or left the lock to a child in the instant of a fork) is no live
// supervisor: the supervisor is down, and a starting one waits for the lock
// instead of leaving.
func TestSupervisorLiveNeedsALiveHolder(t *testing.T) {
	s, _ := newStore(t)
	if err := s.MarkSupervisorWanted(); err != nil {
		t.Fatal(err)
	}
	child, release := holdSupervisorLock(t, s)

	for _, c := range []struct {
		name string
		info *store.SupervisorInfo
		live bool
	}{
		{"no holder recorded", nil, false},
		{"holder dead", &store.SupervisorInfo{Pid: deadPid(t)}, false},
		{"holder's pid reused", &store.SupervisorInfo{Pid: child, PidStart: 1}, false},
		{"holder runs", &store.SupervisorInfo{Pid: child}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(s.SupervisorInfoPath())
			if c.info != nil {
				if err := s.SetSupervisorInfo(c.info); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.SupervisorLive(); got != c.live {
				t.Errorf("SupervisorLive = %v, want %v", got, c.live)
			}
			if got := s.SupervisorDown(); got == c.live {
				t.Errorf("SupervisorDown = %v with the marker set and live = %v", got, c.live)
			}
		})
	}

	// A live holder: a starting supervisor gives up at once.
	if err := s.SetSupervisorInfo(&store.SupervisorInfo{Pid: child}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LockSupervisor(time.Hour); ok || err != nil {
		t.Fatalf("LockSupervisor with a live holder = %v, %v", ok, err)
	}
	// A dead holder whose lock lingers: it waits for the lock, then takes it
	// and records itself.
	if err := s.SetSupervisorInfo(&store.SupervisorInfo{Pid: deadPid(t)}); err != nil {
		t.Fatal(err)
	}
	got := make(chan bool, 1)
	go func() {
		unlock, ok, err := s.LockSupervisor(time.Hour) // the hour only guards a hang
		if err != nil {
			t.Error(err)
		}
		if ok {
			defer unlock()
		}
		got <- ok && s.SupervisorLive()
	}()
	release()
	if !<-got {
		t.Fatal("LockSupervisor did not take the lock once the dying holder let it go")
	}
	if in := s.SupervisorInfo(); in == nil || in.Pid != os.Getpid() || in.PidStart == 0 {
		t.Fatalf("supervisor.json = %+v, want this process", in)
	}
}

// A zombie, or a process with a kill -9 pending, is not live.
func TestSupervisorHolderDying(t *testing.T) {
	s, _ := newStore(t)
	unlock, ok, err := s.TryLockSupervisor()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	defer unlock()
	if !s.SupervisorLive() {
		t.Fatal("this process holds the lock and runs, yet it is not live")
	}
	// A zombie holder (killed, not reaped): dead, whatever holds the lock.
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	in := s.SupervisorInfo()
	in.Pid = pid
	in.PidStart = 0
	if err := s.SetSupervisorInfo(in); err != nil {
		t.Fatal(err)
	}
	if !s.SupervisorLive() {
		t.Fatal("a running holder is not live")
	}
	_ = cmd.Process.Kill()
	// Wait for it to be a zombie without reaping it (WNOWAIT).
	if err := unix.Waitid(unix.P_PID, pid, nil, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if s.SupervisorLive() {
		t.Fatal("a zombie holder counts as live")
	}
	_ = cmd.Wait()
}

// What every command pays for its revive check while a supervisor runs:
// the marker's stat, a lock probe, supervisor.json and /proc/PID/stat.
func BenchmarkSupervisorDownWhileLive(b *testing.B) {
	root, _, err := store.Init(b.TempDir(), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.MarkSupervisorWanted(); err != nil {
		b.Fatal(err)
	}
	unlock, ok, err := s.TryLockSupervisor()
	if err != nil || !ok {
		b.Fatal(ok, err)
	}
	defer unlock()
	for b.Loop() {
		if s.SupervisorDown() {
			b.Fatal("down while this process holds the lock")
		}
	}
}

// The lock probe alone (what the revive check cost before the holder was
// checked), for comparison.
func BenchmarkSupervisorLockProbe(b *testing.B) {
	root, _, err := store.Init(b.TempDir(), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	unlock, ok, err := s.TryLockSupervisor()
	if err != nil || !ok {
		b.Fatal(ok, err)
	}
	defer unlock()
	for b.Loop() {
		if _, free, _ := lockedfile.TryLock(s.SupervisorLockPath()); free {
			b.Fatal("free")
		}
	}
}
