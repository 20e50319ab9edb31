package dashboard

import (
	"testing"

	"github.com/plasmodium/pm/internal/cost"
)

// GET /api/state carries the project's dollars over its windows against
// their caps; a call without a price is unknown, never $0.
func TestSnapshotWindows(t *testing.T) {
	r := newRig(t, nil)
	r.s.Config().Budgets.Project.USDPerDay = 3
	if _, err := r.recordCost(cost.Entry{Agent: "coder-1", Runtime: "exec", Turns: 1}); err != nil {
		t.Fatal(err)
	}
	snap := r.snapshot()
	if len(snap.Windows) != 2 {
		t.Fatalf("windows %+v", snap.Windows)
	}
	if w := snap.Windows[1]; w.Key != "budgets.project.usd_per_day" || w.Against() != "unknown of $3.00 (budgets.project.usd_per_day)" {
		t.Fatalf("day window %+v: %q", w, w.Against())
	}
}
