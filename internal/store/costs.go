package store

import "path/filepath"

// CostsPath is the cost ledger on files: one cost.Entry per model call of
// an llm agent and per run of an exec agent's CLI (state.CostLedger,
// fsstate). pm reset keeps it: the money was spent, and the project's
// windows (budgets.project) still count it.
func (s *Store) CostsPath() string { return filepath.Join(s.Root, "costs.jsonl") }
