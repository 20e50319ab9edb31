package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
)

// LeasesOf is st's agent leases: a hub's (natsstate), or on the files
// filesLeases, which hold nothing: there one machine runs every host, and
// one host per agent is Start's check under the agent's lock and the
// host's pidfd, as before.
func LeasesOf(st state.State) state.AgentLeases {
	if l, ok := state.AgentLeasesOf(st); ok {
		return l
	}
	return filesLeases{}
}

type filesLeases struct{}

func (filesLeases) HoldAgent(context.Context, string, string) (state.AgentLease, error) {
	return filesLease{}, nil
}
func (filesLeases) WaitAgentFree(context.Context, string) error { return nil }
func (filesLeases) LeaseTTL() time.Duration                     { return 0 }

type filesLease struct{}

func (filesLease) Renew(context.Context) error         { return nil }
func (filesLease) Fence(context.Context, string) error { return nil }
func (filesLease) Release(context.Context) error       { return nil }

// Holder names this host in its lease: the machine and the pid.
func Holder() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d", h, os.Getpid())
}

// hostLease is a host's hold on its agent's lease for the host's whole
// life. It renews the lease every third of the TTL. The lease is lost when
// a renewal is refused (it expired, another host took it), when a broker
// call's fence mark is refused, or when no renewal succeeded within the
// TTL less a margin, by this host's clock: the hub expires the key no
// earlier than a TTL after the last renewal it stored, which came after
// the renewal was sent, so the host has fenced itself before any other
// host can take the lease.
type hostLease struct {
	le    state.AgentLease
	ttl   time.Duration
	log   *slog.Logger
	lost  chan struct{} // closed once lost
	once  sync.Once
	why   error
	timer *time.Timer // the deadline: lose() unless a renewal resets it
	stop  chan struct{}
}

// leaseMargin is how much before the TTL a host without a renewal fences
// itself: time to stop its agent before the hub lets another host start it.
func leaseMargin(ttl time.Duration) time.Duration { return ttl / 5 }

// holdLease takes name's lease: state.ErrLeaseHeld when another host
// holds it (a second host of the agent, on any machine).
func holdLease(ctx context.Context, st state.State, name string, log *slog.Logger) (*hostLease, error) {
	return holdLeaseOn(ctx, LeasesOf(st), name, log)
}

func holdLeaseOn(ctx context.Context, ls state.AgentLeases, name string, log *slog.Logger) (*hostLease, error) {
	le, err := ls.HoldAgent(ctx, name, Holder())
	if err != nil {
		return nil, err
	}
	h := &hostLease{le: le, ttl: ls.LeaseTTL(), log: log, lost: make(chan struct{}), stop: make(chan struct{})}
	if h.ttl > 0 {
		h.timer = time.AfterFunc(h.ttl-leaseMargin(h.ttl), func() {
			h.lose(errors.New("no renewal of the lease succeeded within its TTL"))
		})
		go h.keep()
	}
	return h, nil
}

// keep renews the lease until the host leaves or the lease is lost.
func (h *hostLease) keep() {
	tick := time.NewTicker(h.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.lost:
			return
		case <-tick.C:
		}
		sent := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), h.ttl/3)
		err := h.le.Renew(ctx)
		cancel()
		switch {
		case err == nil:
			h.timer.Reset(time.Until(sent.Add(h.ttl - leaseMargin(h.ttl))))
		case errors.Is(err, state.ErrLeaseLost):
			h.lose(err)
			return
		default: // the hub did not answer: try again until the deadline
			h.log.Warn("cannot renew the agent's lease; trying again", "err", err)
		}
	}
}

// lose marks the lease lost, once.
func (h *hostLease) lose(why error) {
	h.once.Do(func() {
		h.why = why
		h.log.Error("fenced: this host lost its agent's lease; stopping the agent", "why", why)
		close(h.lost)
	})
}

// Lost is closed once the lease is lost.
func (h *hostLease) Lost() <-chan struct{} { return h.lost }

// isLost reports whether the lease is lost.
func (h *hostLease) isLost() bool {
	select {
	case <-h.lost:
		return true
	default:
		return false
	}
}

// fencedErr is the error a fenced host ends with.
func (h *hostLease) fencedErr(name string) error {
	return errs.Failf("the agent runs again where its lease is next taken (pm workers, pm agents)",
		"agent %s: this host lost its lease (%v); it stopped the agent and writes nothing more", name, h.why)
}

// release ends the renewals and gives the lease up (a lost one is not
// the host's to give).
func (h *hostLease) release() {
	close(h.stop)
	if h.timer != nil {
		h.timer.Stop()
	}
	if h.isLost() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.le.Release(ctx); err != nil {
		h.log.Warn("release the agent's lease", "err", err)
	}
}

// check is a broker call's fence: refused once the lease is known lost,
// and otherwise only after the hub accepted the call's mark after this
// lease's last one (a newer holder's takeover mark makes the hub refuse
// it, whatever this host's clock says).
func (h *hostLease) check(ctx context.Context, args []string) error {
	if h.isLost() {
		return fmt.Errorf("refused: this host lost the agent's lease (%v)", h.why)
	}
	mark := "pm"
	if len(args) > 0 { // the agent's word: bounded before it reaches the hub
		mark += " " + strings.ToValidUTF8(args[0][:min(len(args[0]), 64)], "")
	}
	err := h.le.Fence(ctx, mark)
	if errors.Is(err, state.ErrLeaseLost) {
		h.lose(err)
		return fmt.Errorf("refused: another host holds the agent's lease (%v)", err)
	}
	if err != nil {
		return fmt.Errorf("refused: the hub did not take the call's fence mark: %v", err)
	}
	return nil
}

// guard puts check before every pm command an agent sends its host.
func (h *hostLease) guard(cmds Commands) Commands {
	if cmds == nil {
		return nil
	}
	return func(token string, halt func(string)) broker.Runner {
		run := cmds(token, halt)
		return func(ctx context.Context, args []string, stdio broker.Stdio) int {
			if err := h.check(ctx, args); err != nil {
				fmt.Fprintf(stdio.Err, "pm: %v\nTry: nothing: this agent is stopped here and runs again on the host that holds its lease\n", err)
				return int(errs.State)
			}
			return run(ctx, args, stdio)
		}
	}
}
