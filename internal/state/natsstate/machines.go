package natsstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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
type machines struct {
	leases  *lease.Leases
	agents  jetstream.KeyValue // the leases' bucket, read by AgentHolder
	workers jetstream.KeyValue
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
	if m.agents, err = s.c.JS.KeyValue(ctx, s.names.Agents); err != nil {
		return nil, fmt.Errorf("agents' leases bucket: %w", err)
	}
	if m.workers, err = s.c.KeyValue(ctx, jetstream.KeyValueConfig{Bucket: s.names.Workers, TTL: m.ttl, LimitMarkerTTL: m.ttl, History: 1,
		Replicas: s.c.Replicas(), Storage: jetstream.FileStorage}); err != nil {
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
	w, err := le.Writer(ctx, s.fenceStream(), s.names.FencePrefix+name)
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
	err = natsx.Do(ctx, func(op context.Context) (err error) { e, err = m.agents.Get(op, agentKey(name)); return err })
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
	return lost(a.w.Append(ctx, []byte(mark)))
}

// RegisterWorker creates w's key; a live one of that name is ErrConflict.
func (s *State) RegisterWorker(ctx context.Context, w state.Worker) (state.WorkerRegistration, error) {
	m, err := s.machinesOpen()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	op, cancel := natsx.Op(ctx)
	defer cancel()
	rev, err := m.workers.Create(op, w.Name, b)
	if errors.Is(err, jetstream.ErrKeyExists) || natsx.WrongLast(err) {
		return nil, state.Errorf(state.ErrConflict, "give this one another name (pm worker --name NAME), or stop the other (pm workers lists them)",
			"a worker named %s is registered and live", w.Name)
	}
	if err != nil {
		return nil, err
	}
	return &workerReg{kv: m.workers, name: w.Name, rev: rev}, nil
}

type workerReg struct {
	kv   jetstream.KeyValue
	name string
	rev  uint64
}

func (r *workerReg) Renew(ctx context.Context, w state.Worker) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	op, cancel := natsx.Op(ctx)
	defer cancel()
	rev, err := r.kv.Update(op, r.name, b, r.rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound) || natsx.WrongLast(err) {
		return state.Errorf(state.ErrLeaseLost, "", "worker %s's registration expired", r.name)
	}
	if err != nil {
		return err
	}
	r.rev = rev
	return nil
}

func (r *workerReg) Release(ctx context.Context) error {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	return r.kv.Delete(op, r.name, jetstream.LastRevision(r.rev))
}

// Workers lists the live workers' keys, by name.
func (s *State) Workers() ([]state.Worker, error) {
	m, err := s.machinesOpen()
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.op()
	defer cancel()
	keys, err := m.workers.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []state.Worker
	for k := range keys.Keys() {
		e, err := m.workers.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // gone meanwhile
		}
		if err != nil {
			return nil, err
		}
		var w state.Worker
		if err := json.Unmarshal(e.Value(), &w); err != nil {
			return nil, fmt.Errorf("worker %s: %w", k, err)
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// WatchWorkers calls fn after a worker's key goes (deleted, or expired:
// the bucket's marker), until ctx ends; renewals (puts) do not wake it,
// so N workers' renewals cost no rescans.
func (s *State) WatchWorkers(ctx context.Context, fn func()) error {
	m, err := s.machinesOpen()
	if err != nil {
		return err
	}
	w, err := m.workers.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return err
	}
	defer w.Stop()
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
