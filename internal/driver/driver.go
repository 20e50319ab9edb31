package driver

import (
	"context"
	"github.com/plasmodium/pm/internal/driver/handle"
	"io"
	"syscall"

	"github.com/plasmodium/pm/internal/driver/internal/proc"
)

// Driver starts, watches and stops agent hosts. Every process pm runs for an
// agent goes through one, so a test can swap in drivertest's fake.
type Driver interface {
	// Start runs spec and returns the handle naming it from now on.
	Start(ctx context.Context, spec Spec) (Handle, error)
	// Wait blocks until the agent named by h has exited (at once if it is
	// gone already) or ctx ends (then it returns ctx's error). It works for
	// an agent some other pm process started.
	Wait(ctx context.Context, h Handle) (ExitStatus, error)
	// Stop ends the agent and everything it started: a polite request, the
	// driver's grace period (cut short when ctx ends) for it to leave, then
	// force. An agent already gone is only cleaned up after: what it left
	// behind is forced at once. stopped reports whether anything was there.
	Stop(ctx context.Context, h Handle) (stopped bool, err error)
	// Signal sends sig to the agent's host alone (not what it started). It
	// returns ErrGone when the agent is no longer running.
	Signal(h Handle, sig syscall.Signal) error
	// Alive reports whether the agent named by h still runs.
	Alive(h Handle) bool
}

// Handle names one run of an agent for good (package handle, where it
// lives so that the store can embed it without linking the driver).
type Handle = handle.Handle

// Spec is what to run for an agent.
type Spec struct {
	Name string   // the agent, for errors and the fake's records
	Argv []string // program and arguments
	Dir  string   // working directory
	Env  []string
	// Output takes stdout and stderr. An *os.File is handed to the process
	// directly, so the caller may close its copy once Start returns.
	Output io.Writer
	// MaxProcs bounds the processes (threads included) of the run, the host
	// counted (config runtime.max_processes); 0: no limit.
	MaxProcs int
	// DieWithParent kills the host when the process that started it dies
	// (Linux: the parent death signal): a worker's hosts end with it, so
	// their leases expire and another worker takes their agents.
	DieWithParent bool
}

// ExitStatus is how an agent ended.
type ExitStatus struct {
	// Code is the exit code, 128+n for signal n, or Unknown when the driver
	// cannot tell (the process driver knows it only for its own children).
	Code int
}

// Unknown is the Code of an exit the driver did not see.
const Unknown = -1

// ErrGone is Signal's answer for an agent that is no longer running.
var ErrGone = proc.ErrGone
