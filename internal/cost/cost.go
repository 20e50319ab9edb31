package cost

import (
	"fmt"
	"time"
)

// Usage is the tokens of one model call (or one agent run), split the way
// providers price them. Input counts only uncached prompt tokens: OpenAI's
// prompt_tokens includes its cached_tokens, which a caller subtracts.
type Usage struct {
	Input      int64 `json:"input"`
	Cached     int64 `json:"cached,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
	Output     int64 `json:"output"`
}

// Tokens is every token of u.
func (u Usage) Tokens() int64 { return u.Input + u.Cached + u.CacheWrite + u.Output }

// Add sums two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, Cached: u.Cached + v.Cached, CacheWrite: u.CacheWrite + v.CacheWrite, Output: u.Output + v.Output}
}

// Dollars is what u costs at p.
func (p Price) Dollars(u Usage) float64 {
	return p.PromptDollars(u) + float64(u.Output)*p.Output/1e6
}

// PromptDollars is what u's prompt side costs at p: a lower bound of the
// next call of the same conversation, whose prompt holds this one's.
func (p Price) PromptDollars(u Usage) float64 {
	cached, write := p.CachedInput, p.CacheWrite
	if cached == 0 {
		cached = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	return (float64(u.Input)*p.Input + float64(u.Cached)*cached + float64(u.CacheWrite)*write) / 1e6
}

// Sources of an Entry's dollars.
const (
	SourceTable    = "table"    // the price table (shipped or config) times the usage
	SourceReported = "reported" // the runtime's own figure (Claude Code's total_cost_usd)
)

// Entry is one line of the cost ledger (.plasmodium/costs.jsonl): one model
// call of an llm agent, or one run of an exec agent's CLI (what it reports
// at the end: Claude Code's result; nothing, for CLIs pm cannot read).
type Entry struct {
	At      time.Time `json:"at"`
	Agent   string    `json:"agent"`
	Task    string    `json:"task,omitempty"`
	Runtime string    `json:"runtime"`
	Model   string    `json:"model,omitempty"`
	// Turns is the model calls the entry covers: 1 for an llm call, the
	// CLI's count for a run (0: not reported).
	Turns int64 `json:"turns"`
	// Usage is nil when the runtime reported none.
	Usage *Usage `json:"usage"`
	// USD is nil when unknown: no usage, or a model without a price.
	USD    *float64 `json:"usd"`
	Source string   `json:"source,omitempty"`
}

// Priced fills e.USD from the table (and overrides) when the runtime
// reported no figure of its own; it leaves USD nil for an unknown model or
// missing usage, except for a model priced at zero (a local one): that
// costs $0 whatever it used.
func (e Entry) Priced(overrides []Price) Entry {
	if e.USD != nil {
		return e
	}
	p, ok := Lookup(e.Model, overrides)
	switch {
	case !ok:
		return e
	case e.Usage == nil && p.free():
		v := 0.0
		e.USD, e.Source = &v, SourceTable
	case e.Usage != nil:
		v := p.Dollars(*e.Usage)
		e.USD, e.Source = &v, SourceTable
	}
	return e
}

func (p Price) free() bool {
	return p.Input == 0 && p.CachedInput == 0 && p.CacheWrite == 0 && p.Output == 0
}

// Sum is the total of some entries, with what is unknown kept apart.
type Sum struct {
	Entries int64   `json:"entries"`
	Turns   int64   `json:"turns"`
	Usage   Usage   `json:"usage"`
	USD     float64 `json:"usd"`     // the known part
	Unknown int64   `json:"unknown"` // entries without dollars
	// NoUsage counts the entries whose runtime reported no tokens.
	NoUsage int64 `json:"no_usage,omitempty"`
}

// Add counts e.
func (s *Sum) Add(e Entry) {
	s.Entries++
	s.Turns += e.Turns
	if e.Usage != nil {
		s.Usage = s.Usage.Add(*e.Usage)
	} else {
		s.NoUsage++
	}
	if e.USD != nil {
		s.USD += *e.USD
	} else {
		s.Unknown++
	}
}

// Plus is s and t together.
func (s Sum) Plus(t Sum) Sum {
	return Sum{Entries: s.Entries + t.Entries, Turns: s.Turns + t.Turns, Usage: s.Usage.Add(t.Usage),
		USD: s.USD + t.USD, Unknown: s.Unknown + t.Unknown, NoUsage: s.NoUsage + t.NoUsage}
}

// String is the cost as people read it: "$0.0123", "unknown" when nothing
// is known, "$0.0123 + unknown (2)" when some entries have no price, and
// "$0" only when every entry is known and free (or there are none).
func (s Sum) String() string {
	switch {
	case s.Unknown > 0 && s.Unknown == s.Entries:
		return "unknown"
	case s.Unknown > 0:
		return fmt.Sprintf("%s + unknown (%d)", USD(s.USD), s.Unknown)
	}
	return USD(s.USD)
}

// USD formats dollars: four decimals under a dollar, cents above.
func USD(v float64) string {
	switch {
	case v == 0:
		return "$0"
	case v < 1:
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
