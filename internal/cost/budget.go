package cost

import (
	"fmt"
	"time"
)

// Cap is a budget in dollars: the config key that sets it and its limit
// (0: none).
type Cap struct {
	Key   string
	Limit float64
}

// Stops reports whether a model call expected to cost at least next may not
// start after spent: the cap is reached, or the call would pass it.
func (c Cap) Stops(spent, next float64) bool {
	return c.Limit > 0 && (spent >= c.Limit || spent+next > c.Limit)
}

// Raise is the command that raises the cap (to twice its limit, as an
// example a person edits).
func (c Cap) Raise() string {
	return fmt.Sprintf("pm config set %s %g", c.Key, c.Limit*2)
}

// OneMore names what answering a request about a cap allows once more:
// one more budget, or an hour's or a day's worth for a project window.
func (c Cap) OneMore() string {
	switch c.Key {
	case KeyHour:
		return "hour's worth"
	case KeyDay:
		return "day's worth"
	}
	return "budget"
}

// Since sums the entries at or after from (a project window: the last hour,
// the last day).
func Since(entries []Entry, from time.Time) Sum {
	var s Sum
	for _, e := range entries {
		if !e.At.Before(from) {
			s.Add(e)
		}
	}
	return s
}

// The dollar caps' config keys.
const (
	KeyAgent = "budgets.agent.max_usd"
	KeyTask  = "budgets.task.max_usd"
	KeyHour  = "budgets.project.usd_per_hour"
	KeyDay   = "budgets.project.usd_per_day"
)

// Caps are the dollar budgets of config.json (0: none).
type Caps struct {
	Agent, Task, Hour, Day float64
}

// Any reports whether any cap is set.
func (c Caps) Any() bool { return c.Agent > 0 || c.Task > 0 || c.Hour > 0 || c.Day > 0 }

// Limit is the cap named by key.
func (c Caps) Limit(key string) float64 {
	switch key {
	case KeyAgent:
		return c.Agent
	case KeyTask:
		return c.Task
	case KeyHour:
		return c.Hour
	case KeyDay:
		return c.Day
	}
	return 0
}

// FirstKey is the key of the first cap set, in the order checked.
func (c Caps) FirstKey() string {
	for _, k := range []string{KeyAgent, KeyTask, KeyHour, KeyDay} {
		if c.Limit(k) > 0 {
			return k
		}
	}
	return ""
}

// Spent is what the caps are checked against, asked for lazily (a window
// reads the ledger only when its cap is set).
type Spent struct {
	Agent  func() float64
	Task   func() float64 // nil: the agent has no task
	Window func(d time.Duration) float64
}

// Stop is a cap a model call may not start under.
type Stop struct {
	What, Key          string
	Limit, Spent, Next float64
}

// First is the first cap (agent, task, last hour, last 24 hours) that a
// call expected to cost at least next may not start under, with extra
// allowed beyond each (by key); nil when none stops it.
func (c Caps) First(sp Spent, next float64, extra map[string]float64) *Stop {
	for _, k := range []struct {
		what, key string
		spent     func() float64
	}{
		{"agent dollars", KeyAgent, sp.Agent},
		{"task dollars", KeyTask, sp.Task},
		{"project dollars in the last hour", KeyHour, func() float64 { return sp.Window(time.Hour) }},
		{"project dollars in the last 24 hours", KeyDay, func() float64 { return sp.Window(24 * time.Hour) }},
	} {
		limit := c.Limit(k.key)
		if limit == 0 || k.spent == nil || (k.key == KeyTask && sp.Task == nil) {
			continue
		}
		limit += extra[k.key]
		if spent := k.spent(); (Cap{Key: k.key, Limit: limit}).Stops(spent, next) {
			return &Stop{What: k.what, Key: k.key, Limit: limit, Spent: spent, Next: next}
		}
	}
	return nil
}
