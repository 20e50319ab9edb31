package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/natsx/lease"
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
func (filesLease) OnRefused(func(error))               {}
func (filesLease) Release(context.Context) error       { return nil }

// Holder names this host in its lease: the machine and the pid.
func Holder() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d", h, os.Getpid())
}

// hostLease is a host's hold on its agent's lease for the host's whole
// life, kept by lease.Keep (the one renewal loop): renewed every third of
// the TTL, and lost when a renewal is refused (it expired, another host
// took it), when a broker call's fence mark is refused, or when no
// renewal succeeded within the TTL less lease.Margin, by this host's
// clock: the hub expires the key no earlier than a TTL after the last
// renewal it stored, which came after the renewal was sent, so the host
// has fenced itself before any other host can take the lease.
type hostLease struct {
	le   state.AgentLease
	kept *lease.Kept
	log  *slog.Logger
}

// holdLease takes name's lease: state.ErrLeaseHeld when another host
// holds it (a second host of the agent, on any machine).
func holdLease(ctx context.Context, st state.State, name string, log *slog.Logger) (*hostLease, error) {
	return holdLeaseOn(ctx, LeasesOf(st), name, log)
}

func holdLeaseOn(ctx context.Context, ls state.AgentLeases, name string, log *slog.Logger) (*hostLease, error) {
	sent := time.Now()
	le, err := ls.HoldAgent(ctx, name, Holder())
	if err != nil {
		return nil, err
	}
	kept := lease.Keep(context.Background(), ls.LeaseTTL(), le.Renew, lease.KeepOptions{
		IsLost: func(err error) bool { return errors.Is(err, state.ErrLeaseLost) },
		OnLoss: func(why error) {
			log.Error("fenced: this host lost its agent's lease; stopping the agent", "why", why)
		},
		Warn:  func(err error) { log.Warn("cannot renew the agent's lease; trying again", "err", err) },
		Since: sent,
	})
	// A call's write the hub refused (another host took the lease) loses
	// it before the call returns: the agent is stopped at once, an llm
	// agent's loop too, whose calls pass no guard.
	le.OnRefused(kept.Lose)
	return &hostLease{le: le, kept: kept, log: log}, nil
}

// Lost is closed once the lease is lost.
func (h *hostLease) Lost() <-chan struct{} { return h.kept.Lost() }

// isLost reports whether the lease is lost.
func (h *hostLease) isLost() bool { return h.kept.IsLost() }

// fencedErr is the error a fenced host ends with.
func (h *hostLease) fencedErr(name string) error {
	return errs.Failf("the agent runs again where its lease is next taken (pm workers, pm agents)",
		"agent %s: this host lost its lease (%v); it stopped the agent and writes nothing more", name, h.kept.Why())
}

// release ends the renewals and gives the lease up (a lost one is not
// the host's to give).
func (h *hostLease) release() {
	h.kept.Stop()
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
		return fmt.Errorf("refused: this host lost the agent's lease (%v)", h.kept.Why())
	}
	err := h.le.Fence(ctx, fenceMark(args))
	if errors.Is(err, state.ErrLeaseLost) {
		h.kept.Lose(err)
		return fmt.Errorf("refused: another host holds the agent's lease (%v)", err)
	}
	if err != nil {
		return fmt.Errorf("refused: the hub did not take the call's fence mark: %v", err)
	}
	return nil
}

// fenceMark names a call in its fence mark: "pm" and the agent's first
// word, bounded (64 bytes) and printable only before it reaches the hub,
// whose stream a human may read.
func fenceMark(args []string) string {
	if len(args) == 0 {
		return "pm"
	}
	word := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(args[0][:min(len(args[0]), 64)], ""))
	return "pm " + word
}

// guard puts check before every pm command an agent sends its host, and
// hands the commands the lease their room appends carry (Commands' fence).
func (h *hostLease) guard(cmds Commands) Commands {
	if cmds == nil {
		return nil
	}
	return func(token string, halt func(string), _ state.AgentLease) broker.Runner {
		run := cmds(token, halt, h.le)
		return func(ctx context.Context, args []string, stdio broker.Stdio) int {
			if err := h.check(ctx, args); err != nil {
				fmt.Fprintf(stdio.Err, "pm: %v\nTry: nothing: this agent is stopped here and runs again on the host that holds its lease\n", err)
				return int(errs.State)
			}
			return run(ctx, args, stdio)
		}
	}
}
