package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
)

// fakeLeases is a hub's leases as the host sees them: each call answers
// what the test set.
type fakeLeases struct {
	mu       *sync.Mutex
	held     bool        // HoldAgent: another host holds it
	renewErr error       // what Renew answers
	lostWhen func() bool // when set: Renew answers lostErr once it is true
	fenceErr error       // what Fence answers
	renewed  chan struct{}
	fences   []string
	released bool
	ttl      time.Duration
}

func (f *fakeLeases) HoldAgent(context.Context, string, string) (state.AgentLease, error) {
	if f.held {
		return nil, state.Mark(errors.New("held by host-b"), state.ErrLeaseHeld)
	}
	return f, nil
}
func (f *fakeLeases) WaitAgentFree(context.Context, string) error { return nil }
func (f *fakeLeases) LeaseTTL() time.Duration                     { return f.ttl }
func (f *fakeLeases) Renew(context.Context) error {
	f.mu.Lock()
	err := f.renewErr
	if f.lostWhen != nil && f.lostWhen() {
		err = lostErr
	}
	f.mu.Unlock()
	select {
	case f.renewed <- struct{}{}:
	default:
	}
	return err
}
func (f *fakeLeases) Fence(_ context.Context, mark string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fenceErr != nil {
		return f.fenceErr
	}
	f.fences = append(f.fences, mark)
	return nil
}
func (f *fakeLeases) OnRefused(func(error)) {}
func (f *fakeLeases) Release(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = true
	return nil
}

var lostErr = state.Mark(errors.New("expired"), state.ErrLeaseLost)

// A host's lease: a second host is refused before it does anything; a
// renewal refused, a fence mark refused, or no renewal answered within
// the TTL, each fences the host (Lost closes), after which the broker
// refuses every call; a host that kept its lease releases it as it leaves.
func TestHostLease(t *testing.T) {
	cases := []struct {
		name     string
		leases   fakeLeases
		trigger  func(h *hostLease) // what makes it lose the lease (nil: nothing)
		wantLost bool
	}{
		{name: "kept and released", leases: fakeLeases{ttl: 3 * time.Second}},
		{name: "renewal refused", leases: fakeLeases{ttl: time.Second, renewErr: lostErr}, wantLost: true},
		{name: "hub does not answer until the deadline", leases: fakeLeases{ttl: time.Second, renewErr: errors.New("timeout")}, wantLost: true},
		{name: "fence mark refused by the hub", leases: fakeLeases{ttl: time.Hour, fenceErr: lostErr}, wantLost: true,
			trigger: func(h *hostLease) { _ = h.check(context.Background(), []string{"say"}) }},
		{name: "files: no lease, nothing to lose", leases: fakeLeases{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &tc.leases
			f.mu, f.renewed = &sync.Mutex{}, make(chan struct{}, 1)
			var logb bytes.Buffer
			h, err := holdLeaseOn(context.Background(), f, "cedar", slog.New(slog.NewTextHandler(&logb, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.trigger != nil {
				tc.trigger(h)
			}
			if tc.wantLost {
				<-h.Lost() // the renewals', the deadline's or the fence's doing
				run := h.guard(func(string, func(string), state.AgentLease) broker.Runner {
					return func(context.Context, []string, broker.Stdio) int {
						t.Error("a fenced host ran an agent's command")
						return 0
					}
				})("tok", nil, nil)
				var stderr strings.Builder
				if code := run(context.Background(), []string{"say", "hi"}, broker.Stdio{Out: io.Discard, Err: &stderr}); code != int(errs.State) {
					t.Fatalf("fenced call: exit %d, want %d", code, errs.State)
				}
				if !strings.Contains(stderr.String(), "lost the agent's lease") {
					t.Fatalf("fenced call said %q", stderr.String())
				}
				if !strings.Contains(logb.String(), "fenced") {
					t.Fatalf("the host's log does not say it was fenced: %s", logb.String())
				}
				h.release()
				if f.released {
					t.Fatal("a lost lease was released (it is the new holder's)")
				}
				return
			}
			if f.ttl > 0 {
				<-f.renewed // one renewal went through
			}
			ran := false
			run := h.guard(func(string, func(string), state.AgentLease) broker.Runner {
				return func(context.Context, []string, broker.Stdio) int { ran = true; return 0 }
			})("tok", nil, nil)
			if code := run(context.Background(), []string{"say", "hi"}, broker.Stdio{Out: io.Discard, Err: io.Discard}); code != 0 || !ran {
				t.Fatalf("held lease: call exit %d, ran %v", code, ran)
			}
			if h.isLost() {
				t.Fatal("lost a lease that was renewed")
			}
			h.release()
			if f.ttl > 0 && (!f.released || len(f.fences) != 1 || f.fences[0] != "pm say") {
				t.Fatalf("released %v, fence marks %q", f.released, f.fences)
			}
		})
	}
}

// A second host of an agent gets ErrLeaseHeld and starts nothing.
func TestSecondHostRefused(t *testing.T) {
	_, err := holdLeaseOn(context.Background(), &fakeLeases{mu: &sync.Mutex{}, held: true, ttl: time.Second}, "cedar", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, state.ErrLeaseHeld) {
		t.Fatalf("second host: %v, want ErrLeaseHeld", err)
	}
}
