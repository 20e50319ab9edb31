package natsx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/errs"
)

// RideOut bounds how long Do keeps asking while a cluster changes leaders:
// a stream's leader is re-elected within seconds of its node's loss (the
// node steps down as it shuts down; an abrupt loss waits for the election
// timeout, 4 to 9 s), and a client whose node went reconnects to another
// within its reconnect wait (2 s). A cluster without a majority elects
// nobody: past RideOut the last error is returned, with its Try line.
const RideOut = 30 * time.Second

// Transient reports an error a request gets while a cluster is losing a
// node or electing a leader, which the same request may not get a moment
// later: no answer in time (the request went to a node that went, or no
// leader took it), no responder, the connection moving to another node, or
// the server saying JetStream or the stream's leader is not available now.
// A refusal (a wrong last sequence, a missing key) is never transient.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var api *jetstream.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case 10008, // JetStream system temporarily unavailable (no meta leader)
			10009, // not the cluster's leader
			10118, // stream is offline
			10158: // a message with this id is being stored (its duplicate is pending)
			return true
		}
		return api.Code == 503
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected)
}

// Do runs one request, each attempt bounded by OpTimeout, and runs it again
// while it fails with a Transient error, until it succeeds, fails
// otherwise, ctx ends or RideOut has passed (then its last error). Only a
// request that is safe to repeat goes through Do: a read, a publish with a
// message id (the stream keeps it once), a publish with an expected last
// sequence (a repeat after it landed is refused, not stored twice).
//
// Given up after RideOut, the error says so with a Try line (its cause
// still within it for errors.Is): a cluster that elects nobody for that
// long has lost its majority, or this machine cannot reach it.
func Do(ctx context.Context, req func(ctx context.Context) error) error {
	return ride(ctx, rides{rideOut: RideOut, pause: 50 * time.Millisecond, most: time.Second}, req)
}

// WhileInProcess runs req, which rides out transient errors itself (Do),
// again while it fails InProcess: the write that stood in its way is
// applied within a moment (a round of the stream's replication), after
// which the answer is a verdict. Pauses from 1 ms, doubled up to 100 ms,
// for RideOut at most (a subject written without pause by others).
//
// Stopped by ctx, or given up after RideOut, with the write still in
// flight, the error is no refusal (neither InProcess nor WrongLast): the
// write was neither stored nor refused, and a caller that reads a refusal
// as a verdict (a fence mark, a renewal) must not take it for one.
func WhileInProcess(ctx context.Context, req func(ctx context.Context) error) error {
	return ride(ctx, inProcessRides(RideOut), req)
}

// inProcessRides are WhileInProcess's bounds, rideOut long.
func inProcessRides(rideOut time.Duration) rides {
	return rides{rideOut: rideOut, pause: time.Millisecond, most: 100 * time.Millisecond, again: InProcess, outer: true,
		giveUp: func(err error) error {
			return &errs.Error{Code: errs.Failure, Msg: fmt.Sprintf("a write of the subject stayed in flight at the stream's leader for %s (%v)", rideOut, err),
				Try: "is the hub overloaded? pm doctor reports the store"}
		}}
}

// rides are the bounds of one ride: how long it keeps asking, its first
// pause between two attempts (doubled each time, up to most), and what
// else than a Transient error is asked again (again: nil for nothing).
type rides struct {
	rideOut     time.Duration
	pause, most time.Duration
	again       func(error) bool
	giveUp      func(err error) error // the error past rideOut (nil: Do's)
	// outer: a ride around requests that ride out transient errors
	// themselves (Do): only again is asked again, and each attempt has
	// ctx whole, not one request's bound.
	outer bool
}

// ride is the one retry loop of pm's hub requests (Do, Stored): each
// attempt bounded by OpTimeout, repeated while it fails Transient (or
// again), until it succeeds, fails otherwise, ctx ends or rideOut has
// passed.
func ride(ctx context.Context, r rides, req func(ctx context.Context) error) error {
	giveUp := time.Now().Add(r.rideOut)
	pause := r.pause
	for {
		op, cancel := Op(ctx)
		if r.outer {
			op = ctx
		}
		err := req(op)
		cancel()
		retry := !r.outer && Transient(err) || r.again != nil && r.again(err)
		if err == nil || !retry {
			return err
		}
		if ctx.Err() != nil {
			return r.stopped(ctx, err)
		}
		if time.Now().After(giveUp) {
			if r.giveUp != nil {
				return r.giveUp(err)
			}
			return &errs.Error{Code: errs.Failure, Err: err, Msg: fmt.Sprintf("the hub did not answer for %s", r.rideOut),
				Try: "is a majority of the hub's nodes up (two of three)? pm doctor reports the store"}
		}
		// Not a wait for another process: the cluster's election, which
		// nothing pm can watch announces.
		select {
		case <-ctx.Done():
			return r.stopped(ctx, err)
		case <-time.After(pause):
		}
		pause = min(2*pause, r.most)
	}
}

// stopped is what a ride stopped by ctx returns: the last error (Do's),
// or, for an outer ride, ctx's end with the last answer's text only: what
// it kept asking about was no verdict, and is not handed back as one.
func (r rides) stopped(ctx context.Context, last error) error {
	if r.outer {
		return fmt.Errorf("%w (the hub's last answer: %v)", ctx.Err(), last)
	}
	return last
}
