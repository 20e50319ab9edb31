package tui

import (
	"context"
	"strings"

	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// pm top's dollars: each agent's cost against its cap and the project's
// windows (ops.Spend, the ledger as pm costs reads it), in the AGENTS
// panel; a task's against budgets.task.max_usd is in its detail view (pm
// status tk-..). Unknown is shown as unknown, never $0.

// agentCost is " · $0.0123 of $2.00 (budgets.agent.max_usd)" for an agent
// the ledger knows, "" for one that made no call.
func (m *Top) agentCost(a *store.Agent) string {
	for _, l := range m.data.Spend.Agents {
		if l.Name == a.Name {
			return " · " + l.Against("budgets.agent.max_usd")
		}
	}
	return ""
}

// projectCost is the project's spend over its windows, one line.
func (m *Top) projectCost() string {
	if len(m.data.Spend.Windows) == 0 {
		return ""
	}
	parts := make([]string, len(m.data.Spend.Windows))
	for i, w := range m.data.Spend.Windows {
		parts[i] = w.Window + " " + w.Against()
	}
	return "  project: " + strings.Join(parts, " · ")
}

// spend reads the costs for pm top's snapshot; a ledger that cannot be
// read leaves the costs out rather than the whole view.
func spend(ctx context.Context, sess *ops.Session) ops.CostsResult {
	res, err := ops.Spend(ctx, sess, ops.CostsInput{})
	if err != nil {
		return ops.CostsResult{}
	}
	return res
}
