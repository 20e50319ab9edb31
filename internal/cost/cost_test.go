package cost

import (
	"math"
	"testing"
	"time"
)

func TestLookup(t *testing.T) {
	over := []Price{{Model: "replay", Input: 1000, Output: 2000}, {Model: "gpt-4o", Input: 9, Output: 9}}
	for _, tc := range []struct {
		model string
		want  string // the matched entry's model, "" for unknown
		input float64
	}{
		{"gpt-4o", "gpt-4o", 9}, // config wins over the table
		{"gpt-4o-mini", "gpt-4o-mini", 0.15},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", 0.15},
		{"openai/gpt-4.1-nano", "gpt-4.1-nano", 0.10},
		{"GPT-4.1", "gpt-4.1", 2},
		{"claude-sonnet-4-20250514", "claude-sonnet-4", 3},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 3},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku", 0.80},
		{"anthropic/claude-opus-4-1@20250805", "claude-opus-4-1", 15},
		{"models/gemini-2.5-flash", "gemini-2.5-flash", 0.30},
		{"gemini-2.0-flash-001", "gemini-2.0-flash", 0.10},
		{"replay", "replay", 1000},
		// Near names are unknown, not a neighbour's price.
		{"gpt-4o-audio-preview", "", 0},
		{"llama3.2", "", 0},
		{"", "", 0},
	} {
		p, ok := Lookup(tc.model, over)
		if ok != (tc.want != "") || p.Model != tc.want || p.Input != tc.input {
			t.Errorf("Lookup(%q) = %+v, %v; want %q at %g", tc.model, p, ok, tc.want, tc.input)
		}
	}
}

func TestDollars(t *testing.T) {
	p := Price{Model: "m", Input: 2, CachedInput: 0.5, CacheWrite: 2.5, Output: 8}
	for _, tc := range []struct {
		name   string
		p      Price
		u      Usage
		want   float64
		prompt float64
	}{
		{"plain", p, Usage{Input: 1_000_000, Output: 500_000}, 2 + 4, 2},
		{"cached", p, Usage{Input: 100_000, Cached: 900_000, Output: 0}, 0.2 + 0.45, 0.65},
		{"cache write", p, Usage{CacheWrite: 1_000_000}, 2.5, 2.5},
		{"no cached price: input price", Price{Model: "m", Input: 1, Output: 1}, Usage{Cached: 1_000_000, CacheWrite: 1_000_000}, 2, 2},
		{"nothing", p, Usage{}, 0, 0},
	} {
		if got := tc.p.Dollars(tc.u); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Dollars = %g, want %g", tc.name, got, tc.want)
		}
		if got := tc.p.PromptDollars(tc.u); math.Abs(got-tc.prompt) > 1e-12 {
			t.Errorf("%s: PromptDollars = %g, want %g", tc.name, got, tc.prompt)
		}
	}
}

func usd(v float64) *float64 { return &v }

func TestPricedAndSum(t *testing.T) {
	over := []Price{{Model: "replay", Input: 1000, Output: 1000}}
	u := &Usage{Input: 100, Output: 50}
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    string
		known   float64
		unknown int64
	}{
		{"none", nil, "$0", 0, 0},
		{"priced", []Entry{{Model: "replay", Usage: u}}, "$0.1500", 0.15, 0},
		{"reported wins", []Entry{{Model: "replay", Usage: u, USD: usd(2), Source: SourceReported}}, "$2.00", 2, 0},
		{"unknown model", []Entry{{Model: "mystery", Usage: u}}, "unknown", 0, 1},
		{"no usage", []Entry{{Runtime: "exec"}}, "unknown", 0, 1},
		{"some unknown", []Entry{{Model: "replay", Usage: u}, {Model: "mystery", Usage: u}}, "$0.1500 + unknown (1)", 0.15, 1},
		{"free model is $0, not unknown", []Entry{{Model: "free", Usage: u}}, "$0", 0, 0},
		{"free model without usage is $0 too", []Entry{{Model: "free"}}, "$0", 0, 0},
		{"priced model without usage is unknown", []Entry{{Model: "replay"}}, "unknown", 0, 1},
	} {
		var s Sum
		for _, e := range tc.entries {
			s.Add(e.Priced(append(over, Price{Model: "free"})))
		}
		if s.String() != tc.want || math.Abs(s.USD-tc.known) > 1e-12 || s.Unknown != tc.unknown {
			t.Errorf("%s: %q (%g, unknown %d), want %q (%g, %d)", tc.name, s.String(), s.USD, s.Unknown, tc.want, tc.known, tc.unknown)
		}
	}
}

func TestCap(t *testing.T) {
	for _, tc := range []struct {
		limit, spent, next float64
		stops              bool
	}{
		{0, 100, 100, false}, // no cap
		{1, 0.5, 0.4, false},
		{1, 0.5, 0.6, true}, // the next call would pass it
		{1, 1, 0, true},     // reached
		{1, 0.99, 0, false}, // first call of a run: nothing known of it
	} {
		if got := (Cap{Limit: tc.limit}).Stops(tc.spent, tc.next); got != tc.stops {
			t.Errorf("limit %g spent %g next %g: Stops = %v", tc.limit, tc.spent, tc.next, got)
		}
	}
	if got := (Cap{Key: "budgets.agent.max_usd", Limit: 0.5}).Raise(); got != "pm config set budgets.agent.max_usd 1" {
		t.Errorf("Raise = %q", got)
	}
}

func TestSince(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	es := []Entry{
		{At: t0.Add(-2 * time.Hour), USD: usd(1)},
		{At: t0.Add(-time.Hour), USD: usd(2)},
		{At: t0.Add(-time.Minute), USD: usd(4)},
		{At: t0.Add(-time.Minute)}, // unknown
	}
	if s := Since(es, t0.Add(-time.Hour)); s.USD != 6 || s.Unknown != 1 || s.Entries != 3 {
		t.Errorf("last hour: %+v", s)
	}
	if s := Since(es, time.Time{}); s.USD != 7 {
		t.Errorf("all: %+v", s)
	}
}

func TestShippedTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Table {
		if err := p.Check(); err != nil || p.Input == 0 || p.Output == 0 {
			t.Errorf("%+v: %v", p, err)
		}
		if seen[p.Model] {
			t.Errorf("%s twice", p.Model)
		}
		seen[p.Model] = true
		if q, ok := Lookup(p.Model, nil); !ok || q != p {
			t.Errorf("%s does not find itself: %+v", p.Model, q)
		}
	}
	if err := (Price{Model: "x", Input: -1}).Check(); err == nil {
		t.Error("a negative price passed")
	}
	if err := (Price{Input: 1}).Check(); err == nil {
		t.Error("a price without a model passed")
	}
}

func TestSameModel(t *testing.T) {
	for rest, want := range map[string]bool{
		"": true, "-latest": true, "-2024-08-06": true, "-20250514": true, "-001": true, "@20250805": true,
		"-20250514@v1": true, "-mini": false, "-audio-preview": false, "-2024-08": false, "@": false, "-1": false, "@X!": false,
	} {
		if got := sameModel(rest); got != want {
			t.Errorf("sameModel(%q) = %v, want %v", rest, got, want)
		}
	}
}

func TestCapsFirst(t *testing.T) {
	spent := func(agent, task, hour, day float64) Spent {
		return Spent{Agent: func() float64 { return agent }, Task: func() float64 { return task },
			Window: func(d time.Duration) float64 {
				if d == time.Hour {
					return hour
				}
				return day
			}}
	}
	for _, tc := range []struct {
		name  string
		caps  Caps
		sp    Spent
		next  float64
		extra map[string]float64
		want  string // key, "" for none
		limit float64
	}{
		{"none set", Caps{}, spent(100, 100, 100, 100), 1, nil, "", 0},
		{"agent first", Caps{Agent: 1, Task: 1}, spent(1, 1, 0, 0), 0, nil, KeyAgent, 1},
		{"task", Caps{Agent: 10, Task: 2}, spent(1, 1.5, 0, 0), 0.6, nil, KeyTask, 2},
		{"no task", Caps{Task: 2}, Spent{Agent: func() float64 { return 0 }, Window: func(time.Duration) float64 { return 0 }}, 5, nil, "", 0},
		{"hour", Caps{Hour: 5, Day: 50}, spent(0, 0, 4.8, 4.8), 1, nil, KeyHour, 5},
		{"day", Caps{Hour: 5, Day: 10}, spent(0, 0, 1, 9.5), 1, nil, KeyDay, 10},
		{"one more allowed", Caps{Agent: 2}, spent(2.4, 0, 0, 0), 1, map[string]float64{KeyAgent: 2}, "", 0},
		{"one more used up", Caps{Agent: 2}, spent(3.6, 0, 0, 0), 1, map[string]float64{KeyAgent: 2}, KeyAgent, 4},
	} {
		st := tc.caps.First(tc.sp, tc.next, tc.extra)
		switch {
		case tc.want == "" && st != nil:
			t.Errorf("%s: stopped by %+v", tc.name, st)
		case tc.want != "" && (st == nil || st.Key != tc.want || st.Limit != tc.limit):
			t.Errorf("%s: %+v, want %s at %g", tc.name, st, tc.want, tc.limit)
		}
	}
}
