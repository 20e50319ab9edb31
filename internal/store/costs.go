package store

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/jsonl"
)

// CostsPath is the cost ledger: one cost.Entry per model call of an llm
// agent and per run of an exec agent's CLI. pm reset keeps it: the money
// was spent, and the project's windows (budgets.project) still count it.
func (s *Store) CostsPath() string { return filepath.Join(s.Root, "costs.jsonl") }

// AppendCost prices e with the config's prices over the shipped table
// (unless the runtime reported its own figure), stamps it with the store's
// clock when it has no time, and appends it to the ledger. It returns the
// entry as recorded.
func (s *Store) AppendCost(e cost.Entry) (cost.Entry, error) {
	if e.At.IsZero() {
		e.At = s.Now().UTC()
	}
	e = e.Priced(s.Config().Prices)
	return e, jsonl.Append(s.CostsPath(), e)
}

// Costs reads the ledger's entries, oldest first; a missing ledger is
// none, a torn or malformed line is reported and skipped. An entry recorded
// unknown (its model had no price then) is priced with today's prices when
// its model has one now: the human added it, as pm costs' hint says, and
// the money was spent all the same. One still without a price stays
// unknown; a figure recorded (priced, or reported by the runtime) is kept.
func (s *Store) Costs() ([]cost.Entry, error) {
	out, err := jsonl.ReadAll[cost.Entry](s.CostsPath(), s.BadLine)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	prices := s.Config().Prices
	for i := range out {
		out[i] = out[i].Priced(prices)
	}
	return out, err
}

// Spent is what the dollar caps of agent a are checked against: agentUSD
// (its own, as its host counts it), the known dollars of every agent of its
// task (agent.json), the project's windows (the ledger).
func (s *Store) Spent(a *Agent, agentUSD func() float64) cost.Spent {
	sp := cost.Spent{Agent: agentUSD, Window: func(d time.Duration) float64 {
		entries, err := s.Costs()
		if err != nil {
			return 0
		}
		return cost.Since(entries, s.Now().Add(-d)).USD
	}}
	if a.TaskID != "" {
		sp.Task = func() float64 {
			agents, err := s.Agents()
			if err != nil {
				return 0
			}
			var usd float64
			for _, x := range agents {
				if x.TaskID == a.TaskID {
					usd += x.Usage.USD
				}
			}
			return usd
		}
	}
	return sp
}
