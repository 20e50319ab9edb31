package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// supervisorWantedPath marks that a supervisor should be running: written
// whenever an agent is started (and by the supervisor itself), removed only
// by a supervisor that found nothing live. A marker without a live
// supervisor holding its lock is one that died (kill -9): the next command
// starts one.
//
// Writing the marker and removing it are serialised by its lock
// (supervisor.wanted.lock): starters hold it shared from the mark through
// what they record (an agent started, a task created), a supervisor leaving
// holds it exclusive across its last look and the removal. So a supervisor
// either sees what a starter recorded (and stays), or the starter's mark
// comes after the removal (and the marker stays for it), whatever is killed
// where.
func (s *Store) supervisorWantedPath() string { return filepath.Join(s.Root, "supervisor.wanted") }

// SupervisorInfoPath is supervisor.json: who holds the supervisor lock, and
// how it runs.
func (s *Store) SupervisorInfoPath() string { return filepath.Join(s.Root, "supervisor.json") }

// MarkSupervisorWanted records that a supervisor should be running.
func (s *Store) MarkSupervisorWanted() error { return s.WhileSupervisorWanted(nil) }

// WhileSupervisorWanted marks a supervisor wanted and runs fn (nil: nothing)
// before a supervisor deciding to leave may take the mark away: what fn
// records is seen by that supervisor's last look, or the mark is made after
// it left.
func (s *Store) WhileSupervisorWanted(fn func() error) error {
	return lockedfile.WithShared(s.supervisorWantedPath(), func() error {
		if !s.SupervisorWanted() {
			f, err := os.OpenFile(s.supervisorWantedPath(), os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
		if fn == nil {
			return nil
		}
		return fn()
	})
}

// SupervisorWanted reports whether the marker is there (one stat).
func (s *Store) SupervisorWanted() bool {
	_, err := os.Stat(s.supervisorWantedPath())
	return err == nil
}

// ClearSupervisorWantedIf removes the marker when idle, asked once every
// start in flight has recorded what it started (WhileSupervisorWanted),
// says nothing is live. A supervisor leaving calls it after releasing its
// lock; removed says whether the marker went.
func (s *Store) ClearSupervisorWantedIf(idle func() bool) (removed bool, err error) {
	err = lockedfile.With(s.supervisorWantedPath(), func() error {
		if !idle() {
			return nil
		}
		if err := os.Remove(s.supervisorWantedPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed = true
		return nil
	})
	return removed, err
}

// SupervisorDown reports that a supervisor is wanted and none is live: one
// died (kill -9) and the next command is to start it again
// (supervisor.Revive). A stat when none is wanted.
func (s *Store) SupervisorDown() bool {
	return s.SupervisorWanted() && !s.SupervisorLive()
}

// SupervisorInfo is supervisor.json, written by the process that holds the
// supervisor lock: who it is (so a lock still held by a process that is
// dying, or by a child forked a moment before its parent was killed, is not
// taken for a live supervisor), and what pm status should show about it.
type SupervisorInfo struct {
	Pid       int       `json:"pid"`
	PidStart  uint64    `json:"pid_start"`
	StartedAt time.Time `json:"started_at"`
	// Polling, when set, says why the supervisor follows the bus by polling
	// instead of file events (the inotify limits are used up).
	Polling string `json:"polling,omitempty"`
	// Blind, when set, says what the supervisor cannot watch and what
	// that costs (no watch on the agent records: a start killed before its
	// event is read only at its last look).
	Blind string `json:"blind,omitempty"`
	// Unreadable lists the agent records it could not read at its last
	// look: it stays on for them, and reports them.
	Unreadable []string `json:"unreadable,omitempty"`
}

// SupervisorInfo reads supervisor.json (nil when there is none or it does
// not decode). It says who held the lock last; SupervisorLive says whether
// that one still does.
func (s *Store) SupervisorInfo() *SupervisorInfo {
	var in SupervisorInfo
	if err := lockedfile.ReadJSON(s.SupervisorInfoPath(), &in); err != nil {
		return nil
	}
	return &in
}

// SetSupervisorInfo rewrites supervisor.json (atomically). Only the holder
// of the supervisor lock calls it.
func (s *Store) SetSupervisorInfo(in *SupervisorInfo) error {
	return lockedfile.WriteJSON(s.SupervisorInfoPath(), in)
}

// TryLockSupervisor takes the supervisor's lifetime lock if it is free,
// without waiting, and records this process as its holder
// (supervisor.json); ok is false when the lock is held. unlock releases it
// (twice is harmless); the lock also ends with the process.
func (s *Store) TryLockSupervisor() (unlock func() error, ok bool, err error) {
	h, ok, err := lockedfile.TryLock(s.SupervisorLockPath())
	if err != nil || !ok {
		return nil, ok, err
	}
	pid := os.Getpid()
	start, _ := processStart(pid)
	if err := s.SetSupervisorInfo(&SupervisorInfo{Pid: pid, PidStart: start, StartedAt: s.Now().UTC()}); err != nil {
		_ = h.Unlock()
		return nil, false, err
	}
	return h.Unlock, true, nil
}

// LockSupervisor is TryLockSupervisor for a supervisor starting up: when
// the lock is held by no live supervisor (its recorded holder is dead or
// dying: a kill -9 takes a few milliseconds to release a process's
// descriptors), it waits up to patience for the lock to be let go, with a
// bounded backoff: a rare path, not a polling loop. ok is false when a live
// supervisor holds it, or it is still held after patience. A supervisor
// taking its lock again (it let it go to look once more before leaving)
// calls it too: supervisor.json still naming it then means the lock is held
// by a probe (SupervisorLive takes it for an instant) or by a supervisor
// that has not recorded itself yet, never by a live one to leave to.
func (s *Store) LockSupervisor(patience time.Duration) (unlock func() error, ok bool, err error) {
	deadline := time.Now().Add(patience)
	delay := time.Millisecond
	for {
		unlock, ok, err := s.TryLockSupervisor()
		if err != nil || ok {
			return unlock, ok, err
		}
		if s.otherHolderLive() || time.Now().After(deadline) {
			return nil, false, nil
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// SupervisorLive reports whether a live supervisor holds the lock: the lock
// is held and its recorded holder is a process that runs and is not being
// killed. A probe of the lock, and while it is held a read of
// supervisor.json and of the holder's /proc/PID/stat.
func (s *Store) SupervisorLive() bool {
	h, free, err := lockedfile.TryLock(s.SupervisorLockPath())
	if err != nil {
		return true // cannot tell: never start a second one on a guess
	}
	if free {
		_ = h.Unlock()
		return false
	}
	return s.holderLive()
}

// otherHolderLive is holderLive for a process asking about a lock it does
// not hold: supervisor.json naming this process is not a live holder.
func (s *Store) otherHolderLive() bool {
	in := s.SupervisorInfo()
	return in != nil && in.Pid != os.Getpid() && processLive(in.Pid, in.PidStart)
}

// holderLive: the process supervisor.json names runs, is the same process
// (start time) and is not on its way out.
func (s *Store) holderLive() bool {
	in := s.SupervisorInfo()
	return in != nil && processLive(in.Pid, in.PidStart)
}

// Bits of /proc/PID/stat read by processLive.
const (
	pfExiting  = 0x4          // PF_EXITING in the flags field: do_exit has begun
	sigKillBit = 1 << (9 - 1) // SIGKILL in the pending-signals field
	statState  = 0            // fields counted from the state (field 3)
	statFlags  = 9 - 3        // field 9
	statStart  = 22 - 3       // field 22: start time, clock ticks since boot
	statSignal = 31 - 3       // field 31: the thread's pending signals
)

// statPath is the main thread's stat: the same fields for what is read
// here, without the kernel summing every thread's times (the process's own
// /proc/PID/stat costs ~10x more for a Go process with its threads).
func statPath(pid int) string {
	p := strconv.Itoa(pid)
	return "/proc/" + p + "/task/" + p + "/stat"
}

// processLive reports whether pid (with that start time, when known) runs
// and will go on running: not a zombie, not exiting, no SIGKILL pending. A
// kill -9 is sent in an instant but the process takes a while to go (every
// thread must leave; its descriptors, and so its flocks, are closed on the
// way): in that window it is dead for pm's purposes. The store keeps its own
// reading of /proc (the driver has one too) because the short executable
// links the store but not the driver.
func processLive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	f, err := readStat(pid)
	if err != nil {
		return false
	}
	if st := string(f[statState]); st == "Z" || st == "X" {
		return false
	}
	flags, _ := strconv.ParseUint(string(f[statFlags]), 10, 64)
	pending, _ := strconv.ParseUint(string(f[statSignal]), 10, 64)
	if flags&pfExiting != 0 || pending&sigKillBit != 0 {
		return false
	}
	if start == 0 {
		return true
	}
	got, err := strconv.ParseUint(string(f[statStart]), 10, 64)
	return err == nil && got == start
}

// processStart is pid's start time (field 22 of /proc/PID/stat).
func processStart(pid int) (uint64, error) {
	f, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(string(f[statStart]), 10, 64)
}

// readStat returns the fields of /proc/PID/stat after "pid (comm)" (comm
// may hold spaces or parentheses): f[0] is the state.
func readStat(pid int) ([][]byte, error) {
	data, err := lockedfile.ReadFile(statPath(pid)) // bare system calls: a short command pays this
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return nil, errors.New(statPath(pid) + ": unexpected format")
	}
	f := bytes.Fields(data[i+2:])
	if len(f) <= statSignal {
		return nil, errors.New(statPath(pid) + ": too few fields")
	}
	return f, nil
}
