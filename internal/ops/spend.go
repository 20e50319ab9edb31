package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/cost"
)

// Against is a cost against its cap as people read it: "$1.20 of $2.00
// (budgets.agent.max_usd)", "unknown of $2.00 (...)", or the cost alone
// with no cap. Unknown stays unknown, never $0.
func Against(costText string, limit float64, key string) string {
	if limit <= 0 {
		return costText
	}
	return costText + " of " + cost.USD(limit) + " (" + key + ")"
}

// Against is the line's cost against its cap (key names the cap).
func (l CostLine) Against(key string) string { return Against(l.Cost, l.MaxUSD, key) }

// Against is the window's spend against its cap.
func (w Window) Against() string { return Against(w.Cost, w.Limit, w.Key) }

// Spend is pm costs without the ledger's lines: what each agent and task
// cost and the project's windows, each with its cap, for the views that
// show cost against budget (pm top, the dashboard, MCP).
func Spend(ctx context.Context, sess *Session, in CostsInput) (CostsResult, error) {
	res, err := Costs(ctx, sess, in)
	res.Entries = nil
	return res, err
}
