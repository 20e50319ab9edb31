package llm

import (
	"fmt"
	"time"

	"github.com/plasmodium/pm/internal/cost"
)

// Budget bounds one Loop. A zero field means no limit.
type Budget struct {
	MaxTurns     int           // model calls that returned a response (retries do not count)
	MaxToolCalls int           // tool calls run
	MaxTokens    int           // total tokens, from the usage the endpoint reports
	MaxWall      time.Duration // since Loop.Started
}

// Counters is what a Loop has spent. Loop.Used accumulates it; a host that
// respawns an agent may seed it (and Loop.Started) so budgets span restarts.
type Counters struct {
	Turns     int64
	ToolCalls int64
	Tokens    int64
}

// Budget kinds reported in BudgetError.What.
const (
	BudgetTurns     = "model turns"
	BudgetToolCalls = "tool calls"
	BudgetTokens    = "tokens"
	BudgetWall      = "wall time"
)

// BudgetError reports the budget that stopped a Loop. For BudgetWall, Limit
// and Used are nanoseconds. A budget in dollars (Key set: the config key of
// the cap) has them in LimitUSD and UsedUSD instead, and Next, the least the
// call it refused would have cost.
type BudgetError struct {
	What  string
	Limit int64
	Used  int64

	Key               string
	LimitUSD, UsedUSD float64
	Next              float64
}

func (e *BudgetError) Error() string {
	if e.Key != "" && e.LimitUSD == 0 {
		return fmt.Sprintf("budget exceeded: %s (%s is set)", e.What, e.Key)
	}
	if e.Key != "" {
		next := ""
		if e.Next > 0 {
			next = " + the next call's " + cost.USD(e.Next)
		}
		return fmt.Sprintf("budget exceeded: %s %s%s of %s (%s)", e.What, cost.USD(e.UsedUSD), next, cost.USD(e.LimitUSD), e.Key)
	}
	if e.What == BudgetWall {
		return fmt.Sprintf("budget exceeded: %s %s of %s", e.What,
			time.Duration(e.Used).Round(time.Millisecond), time.Duration(e.Limit))
	}
	return fmt.Sprintf("budget exceeded: %s %d of %d", e.What, e.Used, e.Limit)
}

// check reports the first exhausted budget before a model call: a limit
// already reached leaves no room for another turn. Tool calls are not
// checked here: with none left the model may still answer in text; a
// response asking for more is stopped by checkResponse.
func (b Budget) check(used Counters, elapsed time.Duration) *BudgetError {
	switch {
	case b.MaxTurns > 0 && used.Turns >= int64(b.MaxTurns):
		return &BudgetError{What: BudgetTurns, Limit: int64(b.MaxTurns), Used: used.Turns}
	case b.MaxTokens > 0 && used.Tokens >= int64(b.MaxTokens):
		return &BudgetError{What: BudgetTokens, Limit: int64(b.MaxTokens), Used: used.Tokens}
	case b.MaxWall > 0 && elapsed >= b.MaxWall:
		return &BudgetError{What: BudgetWall, Limit: int64(b.MaxWall), Used: int64(elapsed)}
	}
	return nil
}

// checkResponse reports an exceeded budget after a response that asks for
// calls more tool calls: it must not run them.
func (b Budget) checkResponse(used Counters, calls int, elapsed time.Duration) *BudgetError {
	switch {
	case b.MaxToolCalls > 0 && used.ToolCalls+int64(calls) > int64(b.MaxToolCalls):
		return &BudgetError{What: BudgetToolCalls, Limit: int64(b.MaxToolCalls), Used: used.ToolCalls + int64(calls)}
	case b.MaxTokens > 0 && used.Tokens > int64(b.MaxTokens):
		return &BudgetError{What: BudgetTokens, Limit: int64(b.MaxTokens), Used: used.Tokens}
	case b.MaxWall > 0 && elapsed >= b.MaxWall:
		return &BudgetError{What: BudgetWall, Limit: int64(b.MaxWall), Used: int64(elapsed)}
	}
	return nil
}

// Bill is u as the cost ledger prices it: the uncached prompt, its cached
// part and the completion; nil for an estimate, which is no bill (unknown).
func (u Usage) Bill() *cost.Usage {
	if u.Estimated {
		return nil
	}
	return &cost.Usage{Input: u.Prompt - u.Cached, Cached: u.Cached, Output: u.Completion}
}
