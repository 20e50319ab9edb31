package tui

import (
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// pm top shows each agent's dollars against its cap and the
// project's windows; unknown is unknown, never $0; an agent without a
// call shows no cost.
func TestTopShowsCostAgainstBudget(t *testing.T) {
	m := &Top{data: TopData{
		Tasks: []*store.Task{{ID: "tk-000001", Status: store.TaskActive, Description: "Build"}},
		Agents: []*store.Agent{{Name: "owner-1", Status: "running", Runtime: "llm"}, {Name: "coder-1", Status: "running", Runtime: "exec"},
			{Name: "idle-1", Status: "pending", Runtime: "llm"}},
		Spend: ops.CostsResult{
			Agents: []ops.CostLine{{Name: "owner-1", Task: "tk-000001", Sum: cost.Sum{Entries: 1, USD: 1.2}, Cost: "$1.20", MaxUSD: 2},
				{Name: "coder-1", Task: "tk-000001", Sum: cost.Sum{Entries: 1, Unknown: 1}, Cost: "unknown", MaxUSD: 2}},
			Windows: []ops.Window{{Key: "budgets.project.usd_per_hour", Window: "last hour", Cost: "$1.20 + unknown (1)", Limit: 5},
				{Key: "budgets.project.usd_per_day", Window: "last 24 hours", Cost: "$1.20 + unknown (1)"}},
		},
	}}
	agents := strings.Join(m.agentLines(), "\n")
	for _, want := range []string{
		"owner-1 ", "· $1.20 of $2.00 (budgets.agent.max_usd)",
		"· unknown of $2.00 (budgets.agent.max_usd)",
		"project: last hour $1.20 + unknown (1) of $5.00 (budgets.project.usd_per_hour) · last 24 hours $1.20 + unknown (1)",
	} {
		if !strings.Contains(agents, want) {
			t.Errorf("agents panel lacks %q:\n%s", want, agents)
		}
	}
	for _, l := range m.agentLines() {
		if strings.Contains(l, "idle-1") && strings.Contains(l, "$") {
			t.Errorf("an agent without a call shows a cost: %q", l)
		}
	}
}
