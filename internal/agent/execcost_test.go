package agent

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// ledgerCounted is a state that counts the ledger entries its readers are
// given.
type ledgerCounted struct {
	state.State
	read int
}

func (c *ledgerCounted) ReadCosts(from int64, fn func(e cost.Entry, next int64) error) (int64, error) {
	return c.State.ReadCosts(from, func(e cost.Entry, next int64) error { c.read++; return fn(e, next) })
}

func (c *ledgerCounted) Costs(since time.Time, fn func(e cost.Entry) error) error {
	return c.State.Costs(since, func(e cost.Entry) error { c.read++; return fn(e) })
}

// An exec agent's dollar check, made after each run and before the next,
// reads only the ledger entries recorded since its host's last check, as
// the llm loop's does (a review found it passed no window: every check
// read the whole ledger), and still counts them all.
func TestExecDollarCheckReadsOnlyWhatIsNew(t *testing.T) {
	s := storetest.New(t)
	cfg := *s.Config()
	cfg.Budgets.Project.USDPerDay = 1000
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.ConfigPath(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	st := &ledgerCounted{State: fsstate.New(s)}
	a := &store.Agent{Name: "cedar_0001", Prompt: "owner", Runtime: config.RuntimeExec, CreatedAt: time.Now()}
	if _, err := s.CreateAgent(a); err != nil {
		t.Fatal(err)
	}
	one := 1.0
	const old = 50
	for range old {
		if err := st.AppendCost(cost.Entry{At: s.Now(), Agent: "other", USD: &one}); err != nil {
			t.Fatal(err)
		}
	}
	budget := newExecBudget(s, st)
	if reason := overDollars(s, st, a, budget); reason != "" || st.read != old {
		t.Fatalf("first check: %q after reading %d entries, want none after %d", reason, st.read, old)
	}
	for run := 1; run <= 3; run++ {
		st.read = 0
		budget.biller(s, st, slog.New(slog.NewTextHandler(io.Discard, nil)), a)(cost.Entry{USD: &one, Source: cost.SourceReported})
		if st.read != 1 {
			t.Fatalf("run %d: its check read %d ledger entries, want the one new", run, st.read)
		}
	}
	cfg.Budgets.Project.USDPerDay = old + 3
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.ConfigPath(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if reason := overDollars(s, st, a, budget); reason == "" {
		t.Fatalf("a day cap of $%d with $%d spent did not stop it", old+3, old+3)
	}
}
