package capability

import (
	"context"
	"errors"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
)

// fence is an agent's tool call's fence, as the host's guard is an exec
// agent's pm command's (agent.hostLease.check): before the call runs, the
// host's lease takes a mark the hub refuses once another host took the
// lease, whatever this host's clock says. A refusal refuses the call
// (and fences the host at once: state.AgentLease.OnRefused). No Fence (a
// person's call, a host on the files): nothing to take.
func (env *Env) fence(ctx context.Context, tool string) error {
	if env.Fence == nil {
		return nil
	}
	err := env.Fence.Fence(ctx, "tool "+tool)
	switch {
	case errors.Is(err, state.ErrLeaseLost):
		return errs.Statef(refusedTry, "refused: another host holds the agent's lease (%v)", err)
	case err != nil:
		return errs.Statef(refusedTry, "refused: the hub did not take the call's fence mark: %v", err)
	}
	return nil
}

const refusedTry = "nothing: this agent is stopped here and runs again on the host that holds its lease"
