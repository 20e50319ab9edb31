package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state"
)

// The costs tool: dollars per agent and task against their caps and the
// project's windows, unknown kept apart (never $0), without the ledger's
// lines.
func TestCostsTool(t *testing.T) {
	sess := newSession(t)
	sess.Store.Config().Budgets.Agent.MaxUSD = 2
	sess.Store.Config().Budgets.Project.USDPerHour = 5
	for _, e := range []cost.Entry{
		{Agent: "owner-1", Task: "tk-000001", Runtime: "llm", Model: "gpt-4o-mini", Turns: 1, Usage: &cost.Usage{Input: 1_000_000}},
		{Agent: "coder-1", Task: "tk-000001", Runtime: "exec", Turns: 1},
	} {
		if _, err := state.RecordCost(sess.State, e, sess.Store.Now(), sess.Store.Config().Prices); err != nil {
			t.Fatal(err)
		}
	}
	_, cs := connect(t, sess, ToolsAll, nil)
	text, isErr := callTool(t, cs, "costs", map[string]any{})
	if isErr {
		t.Fatal(text)
	}
	var res ops.CostsResult
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	byName := map[string]ops.CostLine{}
	for _, l := range res.Agents {
		byName[l.Name] = l
	}
	if got := byName["owner-1"].Against("budgets.agent.max_usd"); got != "$0.1500 of $2.00 (budgets.agent.max_usd)" {
		t.Errorf("owner-1: %q", got)
	}
	if got := byName["coder-1"].Cost; got != "unknown" {
		t.Errorf("coder-1: %q, want unknown", got)
	}
	if res.Total.Cost != "$0.1500 + unknown (1)" || res.Windows[0].Against() != "$0.1500 + unknown (1) of $5.00 (budgets.project.usd_per_hour)" {
		t.Errorf("total %q, window %q", res.Total.Cost, res.Windows[0].Against())
	}
	if len(res.Entries) != 0 {
		t.Errorf("%d ledger lines sent", len(res.Entries))
	}
}
