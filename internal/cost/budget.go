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
