package natsstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/lease"
	"github.com/plasmodium/pm/internal/state"
)

var (
	_ state.AgentLeases      = (*State)(nil)
	_ state.AgentLeaseReader = (*State)(nil)
	_ state.Workers          = (*State)(nil)
)

// machines are the agents' leases, the workers' keys and the fence
// stream, opened at their first use (most commands use none of them).
//
// Every request of theirs rides out a change of leader: the leases' and
// the workers' keys are natsx/lease's leases (a write whose answer was
// lost is recognised as the holder's own, by its message id), reads and
// the fenced writer's start go through natsx.Do.
type machines struct {
	leases  *lease.Leases // the agents'
	workers *lease.Leases // a worker's registration is a lease on its name
	ttl     time.Duration // the leases bucket's, as the hub keeps it
}

// machinesOpen opens them once (a failure is tried again next time).
func (s *State) machinesOpen() (*machines, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mach != nil {
		return s.mach, nil
	}
	ttl := s.LeaseTTLWanted
	if ttl <= 0 {
		ttl = config.DefaultLeaseSeconds * time.Second
	}
	// Made once per project, often on a cluster that is still settling
	// (or a loaded one): each request is repeated while it fails
	// transiently (natsx.Do inside Stream and KeyValue), within RideOut.
	ctx, cancel := context.WithTimeout(s.ctx, natsx.RideOut)
	defer cancel()
	m := &machines{}
	var err error
	if m.leases, err = lease.OpenBucket(ctx, s.c, s.names.Agents, ttl); err != nil {
		return nil, err
	}
	if m.ttl, err = m.leases.TTL(ctx); err != nil {
		return nil, err
	}
	if m.workers, err = lease.OpenBucket(ctx, s.c, s.names.Workers, m.ttl); err != nil {
		return nil, fmt.Errorf("workers bucket: %w", err)
	}
	// One mark per agent is all a fence needs: the stream keeps the last.
	// A project whose rooms stream holds the fence subjects has no fence
	// stream (fenceStream).
	if s.rooms.Fences() == "" {
		if _, err = s.c.Stream(ctx, jetstream.StreamConfig{Name: s.names.Fence, Subjects: []string{s.names.FencePrefix + ">"},
			MaxMsgsPerSubject: 1}); err != nil {
			return nil, err
		}
	}
	s.mach = m
	return m, nil
}

// LeaseTTL is the leases bucket's TTL (the first machine's store.lease_seconds).
func (s *State) LeaseTTL() time.Duration {
	m, err := s.machinesOpen()
	if err != nil {
		return config.DefaultLeaseSeconds * time.Second
	}
	return m.ttl
}

// agentKey is an agent's lease key ("agent NAME" in a bucket of its own).
func agentKey(name string) string { return "agent." + name }

// HoldAgent takes name's lease and starts its fenced writer: every
// earlier holder's Fence is refused from then on.
func (s *State) HoldAgent(ctx context.Context, name, holder string) (state.AgentLease, error) {
	m, err := s.machinesOpen()
	if err != nil {
		return nil, err
	}
	le, err := m.leases.Acquire(ctx, agentKey(name), holder)
	if errors.Is(err, lease.ErrHeld) {
		return nil, state.Mark(err, state.ErrLeaseHeld)
	}
	if err != nil {
		return nil, err
	}
	// The writer's start (a read of the fence subject's last mark, then
	// a takeover mark after it) is safe to repeat: a mark of a first
	// attempt that landed unanswered is read as the last, and the repeat's
	// mark goes after it.
	var w *lease.Writer
	err = natsx.Do(ctx, func(op context.Context) (err error) {
		w, err = le.Writer(op, s.fenceStream(), s.names.FencePrefix+name)
		return err
	})
	if err != nil {
		_ = le.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	return &agentLease{le: le, w: w, stream: s.fenceStream()}, nil
}

// WaitAgentFree returns once name's lease is free.
func (s *State) WaitAgentFree(ctx context.Context, name string) error {
	m, err := s.machinesOpen()
	if err != nil {
		return err
	}
	return m.leases.WaitFree(ctx, agentKey(name))
}

// AgentHolder reads name's lease: its holder, "" when it is free (an
// expired lease reads as its bucket's marker, a deleted key).
func (s *State) AgentHolder(ctx context.Context, name string) (string, error) {
	m, err := s.machinesOpen()
	if err != nil {
		return "", err
	}
	var e jetstream.KeyValueEntry
	err = natsx.Do(ctx, func(op context.Context) (err error) { e, err = m.leases.KV().Get(op, agentKey(name)); return err })
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(e.Value()), nil
}

type agentLease struct {
	le     *lease.Lease
	w      *lease.Writer
	stream string // w's: the rooms stream when it holds the fence subjects (fence.go)

	mu        sync.Mutex
	onRefused func(why error)
}

func lost(err error) error {
	if errors.Is(err, lease.ErrLost) || errors.Is(err, lease.ErrFenced) {
		return state.Mark(err, state.ErrLeaseLost)
	}
	return err
}

func (a *agentLease) Renew(ctx context.Context) error   { return lost(a.le.Renew(ctx)) }
func (a *agentLease) Release(ctx context.Context) error { return lost(a.le.Release(ctx)) }
func (a *agentLease) Fence(ctx context.Context, mark string) error {
	err := a.w.Append(ctx, []byte(mark))
	if errors.Is(err, lease.ErrFenced) {
		a.refused(err)
	}
	return lost(err)
}

func (a *agentLease) OnRefused(fn func(why error)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.onRefused = fn
}

// refused tells the lease's host that the hub refused a write it
// carried (ErrFenced: a newer holder's takeover mark stands).
func (a *agentLease) refused(why error) {
	a.mu.Lock()
	fn := a.onRefused
	a.mu.Unlock()
	if fn != nil {
		fn(why)
	}
}

// RegisterWorker takes w's key, a lease on its name whose value is w; a
// live one of that name is ErrConflict.
func (s *State) RegisterWorker(ctx context.Context, w state.Worker) (state.WorkerRegistration, error) {
	m, err := s.machinesOpen()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	le, err := m.workers.AcquireWith(ctx, w.Name, "worker "+w.Name, b)
	if errors.Is(err, lease.ErrHeld) {
		return nil, state.Errorf(state.ErrConflict, "give this one another name (pm worker --name NAME), or stop the other (pm workers lists them)",
			"a worker named %s is registered and live", w.Name)
	}
	if err != nil {
		return nil, err
	}
	return &workerReg{le: le}, nil
}

type workerReg struct{ le *lease.Lease }

func (r *workerReg) Renew(ctx context.Context, w state.Worker) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	err = r.le.RenewWith(ctx, b)
	if errors.Is(err, lease.ErrLost) {
		return state.Errorf(state.ErrLeaseLost, "", "worker %s's registration expired", r.le.Key)
	}
	return err
}

func (r *workerReg) Release(ctx context.Context) error { return r.le.Release(ctx) }

// Workers lists the live workers' keys, by name, as the stream's leader
// holds them (lease.Leases.Keys, then a read of each; repeated whole while
// the hub changes leaders).
func (s *State) Workers() ([]state.Worker, error) {
	m, err := s.machinesOpen()
	if err != nil {
		return nil, err
	}
	var out []state.Worker
	err = s.do(func(op context.Context) error {
		out = nil
		kv := m.workers.KV()
		keys, err := m.workers.Keys(op) // the leader's, not a replica's
		if err != nil {
			return err
		}
		for _, k := range keys {
			e, err := kv.Get(op, k)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				continue // gone meanwhile
			}
			if err != nil {
				return err
			}
			var w state.Worker
			if err := json.Unmarshal(e.Value(), &w); err != nil {
				return fmt.Errorf("worker %s: %w", k, err)
			}
			out = append(out, w)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// watchMade is called once WatchWorkers' watch is made (a test's hook: a
// watch of updates only sees what comes after it).
var watchMade = func() {}

// WatchWorkers calls fn after a worker's key goes (deleted, or expired:
// the bucket's marker), until ctx ends; renewals (puts) do not wake it,
// so N workers' renewals cost no rescans. The watch is made like every
// request (natsx.Do: each attempt bounded by natsx.OpTimeout, asked again
// while the hub does not answer, as while a leader is elected), and lives
// until ctx ends (watchUntil).
func (s *State) WatchWorkers(ctx context.Context, fn func()) error {
	m, err := s.machinesOpen()
	if err != nil {
		return err
	}
	var w jetstream.KeyWatcher
	err = natsx.Do(ctx, func(op context.Context) (err error) {
		w, err = watchUntil(ctx, op, func(life context.Context) (jetstream.KeyWatcher, error) {
			return m.workers.KV().WatchAll(life, jetstream.UpdatesOnly())
		})
		return err
	})
	if err != nil {
		return err
	}
	defer w.Stop()
	watchMade()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("natsstate: the workers' watch ended")
			}
			if e != nil && e.Operation() != jetstream.KeyValuePut {
				fn() // a worker gone (deleted, or its key expired); renewals are puts
			}
		}
	}
}

// watchUntil makes a watch that lives until life ends, its making bounded
// by op. nats.go's ordered consumer takes one context for both: its
// consumer's creation request, and the subscription's life (it
// unsubscribes when that context ends). So the watch is made under life
// (a request nats.go bounds by its own API timeout when life has no
// deadline), waited for within op; past op it is let go (its context
// cancelled) and op's error returned, for natsx.Do to ask again. A
// creation left unanswered may leave its ephemeral consumer on the hub,
// which deletes it once idle.
func watchUntil(life, op context.Context, watch func(life context.Context) (jetstream.KeyWatcher, error)) (jetstream.KeyWatcher, error) {
	wctx, cancel := context.WithCancel(life)
	type made struct {
		w   jetstream.KeyWatcher
		err error
	}
	got := make(chan made, 1)
	go func() {
		w, err := watch(wctx)
		got <- made{w, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			cancel()
			return nil, r.err
		}
		context.AfterFunc(life, cancel) // the watch's context ends with life, not before
		return r.w, nil
	case <-op.Done():
		cancel()
		if r := <-got; r.err == nil {
			_ = r.w.Stop()
		}
		return nil, op.Err()
	}
}
