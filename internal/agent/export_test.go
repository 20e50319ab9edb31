package agent

import (
	"context"
	"log/slog"

	"github.com/plasmodium/pm/internal/state"
)

// HostLease is a host's hold on its agent's lease, for the tests of
// package agent_test (which may import ops: package agent may not).
type HostLease = hostLease

// HoldLeaseOn takes name's lease on ls as a host does.
func HoldLeaseOn(ctx context.Context, ls state.AgentLeases, name string, log *slog.Logger) (*HostLease, error) {
	return holdLeaseOn(ctx, ls, name, log)
}

// Guard is the host's guard around the commands its agent sends it.
func (h *hostLease) Guard(cmds Commands) Commands { return h.guard(cmds) }

// Lease is the lease the host holds (what its agent's calls carry).
func (h *hostLease) Lease() state.AgentLease { return h.le }

// Release ends the renewals and gives the lease up.
func (h *hostLease) Release() { h.release() }

// IsLost reports whether the host knows its lease lost.
func (h *hostLease) IsLost() bool { return h.isLost() }
