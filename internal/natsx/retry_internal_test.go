package natsx

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/errs"
)

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"no answer in time", fmt.Errorf("get: %w", context.DeadlineExceeded), true},
		{"nats timeout", nats.ErrTimeout, true},
		{"no responders", nats.ErrNoResponders, true},
		{"no stream response", jetstream.ErrNoStreamResponse, true},
		{"reconnecting", nats.ErrConnectionReconnecting, true},
		{"JetStream unavailable", &jetstream.APIError{Code: 503, ErrorCode: 10008}, true},
		{"stream offline", &jetstream.APIError{Code: 500, ErrorCode: 10118}, true},
		{"duplicate pending", &jetstream.APIError{Code: 503, ErrorCode: 10158}, true},
		{"wrong last sequence", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, false},
		{"key not found", jetstream.ErrKeyNotFound, false},
		{"canceled", context.Canceled, false},
		{"other", errors.New("boom"), false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// Do repeats a request while it fails transiently, returns a refusal at
// once, stops with its caller's context, and gives up after its ride-out
// with a Try line and the cause within.
func TestDo(t *testing.T) {
	doFor := func(ctx context.Context, rideOut time.Duration, req func(context.Context) error) error {
		return ride(ctx, rides{rideOut: rideOut, pause: time.Millisecond, most: time.Millisecond}, req)
	}
	ctx := context.Background()
	calls := 0
	err := doFor(ctx, time.Minute, func(context.Context) error {
		if calls++; calls < 3 {
			return nats.ErrNoResponders
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("transient twice, then answered: %v after %d calls", err, calls)
	}

	calls = 0
	refused := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}
	if err := doFor(ctx, time.Minute, func(context.Context) error { calls++; return refused }); !errors.Is(err, refused) || calls != 1 {
		t.Fatalf("a refusal: %v after %d calls, want it at once", err, calls)
	}

	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = doFor(cctx, time.Minute, func(context.Context) error { calls++; cancel(); return nats.ErrTimeout })
	if !errors.Is(err, nats.ErrTimeout) || calls != 1 {
		t.Fatalf("caller's context ended: %v after %d calls", err, calls)
	}

	err = doFor(ctx, 100*time.Millisecond, func(context.Context) error { return nats.ErrNoResponders })
	var e *errs.Error
	if !errors.As(err, &e) || e.Try == "" || !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("given up: %v, want an error with a Try line and its cause", err)
	}
}

// WhileInProcess never hands back a refusal it stopped asking about as a
// verdict: stopped by its caller's context, or given up after its
// ride-out, with the subject's write still in flight, the error is
// neither WrongLast nor InProcess (a fence mark read it as "fenced", a
// renewal as "lost": the lease's host stopped its agent for nothing).
func TestWhileInProcessStopsWithoutAVerdict(t *testing.T) {
	inFlight := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant}
	cctx, cancel := context.WithCancel(context.Background())
	err := ride(cctx, inProcessRides(time.Minute), func(context.Context) error { cancel(); return inFlight })
	if err == nil || WrongLast(err) || InProcess(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped by its caller: %v; want the context's end, not a refusal", err)
	}
	err = ride(context.Background(), inProcessRides(20*time.Millisecond), func(context.Context) error { return inFlight })
	var e *errs.Error
	if err == nil || WrongLast(err) || InProcess(err) || !errors.As(err, &e) || e.Try == "" {
		t.Fatalf("given up: %v; want an error with a Try line, not a refusal", err)
	}
	calls := 0
	err = ride(context.Background(), inProcessRides(time.Minute), func(context.Context) error {
		if calls++; calls < 3 {
			return inFlight
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("in flight twice, then stored: %v after %d calls", err, calls)
	}
}
