// Package drivertest is an in-memory driver.Driver for unit tests: handles
// are tokens, nothing runs, and the test decides when an agent exits and with
// what status. It records every Start, Stop and Signal.
//
// Invariants: a token is never reused (so a stale handle never names a newer
// run); Wait wakes on Exit through a channel, never by polling; a Stop or a
// SIGTERM/SIGKILL ends a running agent at once with 128+signal.
package drivertest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"syscall"

	"github.com/plasmodium/pm/internal/driver"
)

// Driver is the fake. The zero value is not usable; call New.
type Driver struct {
	mu       sync.Mutex
	next     int
	runs     map[driver.Handle]*run
	started  []driver.Spec
	stopped  []driver.Handle
	signals  []Signal
	startErr error
	onStart  func(driver.Handle, driver.Spec)
}

// Signal is one recorded Signal call.
type Signal struct {
	Handle driver.Handle
	Sig    syscall.Signal
}

type run struct {
	done   chan struct{}
	status driver.ExitStatus
}

// New returns a fake with nothing running.
func New() *Driver { return &Driver{runs: map[driver.Handle]*run{}} }

// tokenBase keeps fake pids clear of small real ones in logs and events.
const tokenBase = 1_000_000

// Start records spec and returns a fresh token; the agent "runs" until Exit,
// Stop or a terminating Signal.
func (d *Driver) Start(_ context.Context, spec driver.Spec) (driver.Handle, error) {
	d.mu.Lock()
	if d.startErr != nil {
		err := d.startErr
		d.mu.Unlock()
		return driver.Handle{}, err
	}
	d.next++
	h := driver.Handle{Pid: tokenBase + d.next, PidStart: uint64(d.next)}
	d.runs[h] = &run{done: make(chan struct{})}
	spec.Argv = slices.Clone(spec.Argv)
	d.started = append(d.started, spec)
	hook := d.onStart
	d.mu.Unlock()
	if hook != nil {
		hook(h, spec)
	}
	return h, nil
}

// Wait blocks until the run named by h exits or ctx ends. A handle this fake
// never made is gone already (status unknown), like a dead pid.
func (d *Driver) Wait(ctx context.Context, h driver.Handle) (driver.ExitStatus, error) {
	d.mu.Lock()
	r := d.runs[h]
	d.mu.Unlock()
	if r == nil {
		return driver.ExitStatus{Code: driver.Unknown}, nil
	}
	select {
	case <-r.done:
		return r.status, nil
	case <-ctx.Done():
		return driver.ExitStatus{Code: driver.Unknown}, ctx.Err()
	}
}

// Stop records the call and ends a running agent with 128+SIGTERM.
func (d *Driver) Stop(_ context.Context, h driver.Handle) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = append(d.stopped, h)
	return d.exitLocked(h, 128+int(syscall.SIGTERM)), nil
}

// Signal records the call; SIGTERM and SIGKILL end a running agent with
// 128+signal, other signals change nothing.
func (d *Driver) Signal(h driver.Handle, sig syscall.Signal) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.signals = append(d.signals, Signal{h, sig})
	if !d.aliveLocked(h) {
		return driver.ErrGone
	}
	if sig == syscall.SIGTERM || sig == syscall.SIGKILL {
		d.exitLocked(h, 128+int(sig))
	}
	return nil
}

// Alive reports whether the run named by h has not exited.
func (d *Driver) Alive(h driver.Handle) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.aliveLocked(h)
}

// Exit ends the run named by h with code, waking its waiters. It reports
// whether the run was still going.
func (d *Driver) Exit(h driver.Handle, code int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.exitLocked(h, code)
}

// FailStarts makes every later Start return err (nil: start again).
func (d *Driver) FailStarts(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.startErr = err
}

// OnStart calls fn (outside the fake's lock) after every later Start.
func (d *Driver) OnStart(fn func(driver.Handle, driver.Spec)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onStart = fn
}

// Started returns the specs of every Start so far, in order.
func (d *Driver) Started() []driver.Spec {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.started)
}

// Stopped returns the handles of every Stop so far, in order.
func (d *Driver) Stopped() []driver.Handle {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.stopped)
}

// Signals returns every Signal call so far, in order.
func (d *Driver) Signals() []Signal {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.signals)
}

// Running returns the handles of the runs that have not exited.
func (d *Driver) Running() []driver.Handle {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []driver.Handle
	for h := range d.runs {
		if d.aliveLocked(h) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b driver.Handle) int { return a.Pid - b.Pid })
	return out
}

func (d *Driver) aliveLocked(h driver.Handle) bool {
	r := d.runs[h]
	if r == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

func (d *Driver) exitLocked(h driver.Handle, code int) bool {
	if !d.aliveLocked(h) {
		return false
	}
	r := d.runs[h]
	r.status = driver.ExitStatus{Code: code}
	close(r.done)
	return true
}

// ErrStart is a ready-made error for FailStarts.
var ErrStart = errors.New("drivertest: start refused")

var _ driver.Driver = (*Driver)(nil)
