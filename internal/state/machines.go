package state

import (
	"context"
	"errors"
	"time"
)

// Machines are what a project on a hub keeps about the machines that run
// its agents (issue 24): one lease per agent, held by its host, and the
// registered workers. Only a hub's state implements them; on the files
// one machine runs every agent, and one host per agent is the launcher's
// locked start and the host's pidfd (agent.LeasesOf's files lease).

// ErrLeaseHeld: another host holds the agent's lease.
var ErrLeaseHeld = errors.New("state: lease held by another host")

// ErrLeaseLost: the lease expired or another host took it; the holder's
// renewals, releases and fenced writes are refused.
var ErrLeaseLost = errors.New("state: lease lost")

// AgentLeases hold one live host per agent across machines.
type AgentLeases interface {
	// HoldAgent takes the lease "agent NAME" for holder, or fails with
	// ErrLeaseHeld (of two racing, one wins). The lease lasts LeaseTTL
	// unrenewed.
	HoldAgent(ctx context.Context, name, holder string) (AgentLease, error)
	// WaitAgentFree returns once name's lease is free (released, expired
	// or never taken), woken by the lease bucket's watch; within a bound
	// (lease.WaitBound: two TTLs and a request's ride-out), past which it
	// fails (a live holder kept renewing it, or the hub did not answer).
	WaitAgentFree(ctx context.Context, name string) error
	// LeaseTTL is how long a lease (and a worker's registration) lasts
	// unrenewed.
	LeaseTTL() time.Duration
}

// AgentLeaseReader reads an agent's lease without taking it: pm doctor
// --check asks whether a host holds it, wherever that host runs.
type AgentLeaseReader interface {
	// AgentHolder is the holder named in name's live lease (Holder: the
	// machine and the pid, or a worker claiming it), "" when none holds
	// it (never taken, released or expired).
	AgentHolder(ctx context.Context, name string) (string, error)
}

// AgentLease is one host's lease on its agent.
type AgentLease interface {
	// Renew extends it by the TTL from now: ErrLeaseLost once it expired
	// or another took it.
	Renew(ctx context.Context) error
	// Fence appends a mark to the agent's fence subject after the last one
	// this lease wrote: the hub refuses it (ErrLeaseLost) once a newer
	// holder took the lease and wrote its takeover mark, whatever this
	// host's clock says.
	Fence(ctx context.Context, mark string) error
	// OnRefused has fn called, before the refused call returns, each time
	// the hub refuses a write this lease carried (a Fence, a room append
	// of AppendFenced) because a newer holder took the lease: proof the
	// host lost it, so its host stops the agent at once rather than at
	// its next renewal. fn is the host's, set once as it takes the lease.
	OnRefused(fn func(why error))
	// Release gives the lease up.
	Release(ctx context.Context) error
}

// Worker is one machine registered to run a project's agents (pm worker).
type Worker struct {
	Name     string   `json:"name"`
	Capacity int      `json:"capacity"`
	Running  []string `json:"running"` // the agents its hosts run, sorted
	// Taking are the agents it is starting or taking over from a gone
	// worker; Waiting those placed on it that wait for a free place
	// (it runs at most Capacity at once). Both sorted.
	Taking   []string  `json:"taking,omitempty"`
	Waiting  []string  `json:"waiting,omitempty"`
	LastSeen time.Time `json:"last_seen"`
}

// Free is how many more agents the worker takes: its capacity less every
// agent that holds or waits for one of its places, each counted once:
// what it runs, takes on and has waiting, and placed, the agents placed
// on it since its last renewal that it does not list yet (task.Place
// passes them). Negative when more wait than it has places.
func (w Worker) Free(placed ...string) int {
	held := map[string]bool{}
	for _, names := range [][]string{w.Running, w.Taking, w.Waiting, placed} {
		for _, n := range names {
			held[n] = true
		}
	}
	return w.Capacity - len(held)
}

// Workers are the registered workers: a key each that expires LeaseTTL
// after its worker's last renewal.
type Workers interface {
	// RegisterWorker registers w, or fails with ErrConflict while a live
	// worker of that name is registered.
	RegisterWorker(ctx context.Context, w Worker) (WorkerRegistration, error)
	// Workers lists the live workers, by name.
	Workers() ([]Worker, error)
	// WatchWorkers calls fn after a registration goes (released or
	// expired) until ctx ends; renewals and new registrations do not wake
	// it (a gone worker's agents are what a worker acts on).
	WatchWorkers(ctx context.Context, fn func()) error
}

// WorkerRegistration is a live worker's key.
type WorkerRegistration interface {
	// Renew rewrites it (w is what it says now) and extends it:
	// ErrLeaseLost once it expired.
	Renew(ctx context.Context, w Worker) error
	// Release removes it.
	Release(ctx context.Context) error
}

// Unwrapper is a State that wraps another (stateopen.Opened): the
// optional interfaces are looked for in what it wraps too.
type Unwrapper interface{ Unwrap() State }

// as finds the optional interface T in st or what it wraps.
func as[T any](st State) (T, bool) {
	for st != nil {
		if t, ok := st.(T); ok {
			return t, true
		}
		u, ok := st.(Unwrapper)
		if !ok {
			break
		}
		st = u.Unwrap()
	}
	var zero T
	return zero, false
}

// WorkersOf is st's workers: only a hub's state has them.
func WorkersOf(st State) (Workers, bool) { return as[Workers](st) }

// AgentLeasesOf is st's agents' leases: only a hub's state has them.
func AgentLeasesOf(st State) (AgentLeases, bool) { return as[AgentLeases](st) }

// AgentLeaseReaderOf reads st's agents' leases: only a hub's state has them.
func AgentLeaseReaderOf(st State) (AgentLeaseReader, bool) { return as[AgentLeaseReader](st) }
