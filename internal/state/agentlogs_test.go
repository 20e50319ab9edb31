package state_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/memstate"
)

// A call recorded while its model had no price is unknown; once the human
// adds the price (pm costs' hint: "add it to prices in config.json"), the
// ledger reads it priced, in pm costs and in the project's windows alike.
// A model still without a price stays unknown, never $0, and a figure the
// runtime reported is kept as it was.
func TestCostsPriceUnknownEntriesWhenThePriceIsAdded(t *testing.T) {
	st := memstate.New()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reported := 0.5
	for _, e := range []cost.Entry{
		{Agent: "a", Runtime: "llm", Model: "house-model", Turns: 1, Usage: &cost.Usage{Input: 1_000_000, Output: 1_000_000}},
		{Agent: "b", Runtime: "llm", Model: "other-model", Turns: 1, Usage: &cost.Usage{Input: 1_000_000}},
		{Agent: "c", Runtime: "exec", Model: "house-model", Turns: 1, Usage: &cost.Usage{Input: 1_000_000}, USD: &reported, Source: cost.SourceReported},
	} {
		if _, err := state.RecordCost(st, e, now, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := state.PricedCosts(st, time.Time{}, nil); got[0].USD != nil {
		t.Fatalf("unpriced call read as $%v", *got[0].USD)
	}
	prices := []cost.Price{{Model: "house-model", Input: 1, Output: 2}}
	got, err := state.PricedCosts(st, time.Time{}, prices)
	if err != nil {
		t.Fatal(err)
	}
	three, half := 3.0, 0.5
	want := []*float64{&three, nil, &half}
	for i, e := range got {
		switch {
		case (e.USD == nil) != (want[i] == nil):
			t.Errorf("%s: usd %v, want %v", e.Agent, e.USD, want[i])
		case e.USD != nil && *e.USD != *want[i]:
			t.Errorf("%s: usd %v, want %v", e.Agent, *e.USD, *want[i])
		}
	}
	// The windows count the entry priced now too.
	sp := state.Spent(st, nil, &state.Agent{Name: "a"}, func() time.Time { return now.Add(time.Minute) }, prices, func() float64 { return 0 })
	if usd := sp.Window(time.Hour); usd != 3.5 {
		t.Errorf("the last hour's dollars = %v, want 3.5", usd)
	}
	if usd := sp.Window(time.Second); usd != 0 {
		t.Errorf("the last second's dollars = %v, want 0 (every entry is older)", usd)
	}
}

// counting is a ledger that counts the entries its readers are given.
type counting struct {
	*memstate.Mem
	read int
}

func (c *counting) ReadCosts(from int64, fn func(e cost.Entry, next int64) error) (int64, error) {
	return c.Mem.ReadCosts(from, func(e cost.Entry, next int64) error { c.read++; return fn(e, next) })
}

func (c *counting) Costs(since time.Time, fn func(e cost.Entry) error) error {
	return c.Mem.Costs(since, func(e cost.Entry) error { c.read++; return fn(e) })
}

// A host's dollar check reads the ledger from where its last check
// stopped (review: every model call under a dollar cap read the whole
// ledger): after the first, each check reads only the entries recorded
// since, and the windows still count every entry of their span, entries
// older than the day let go.
func TestCostWindowReadsOnlyWhatIsNew(t *testing.T) {
	st := &counting{Mem: memstate.New()}
	start := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	one := 1.0
	const old = 100
	for i := range old { // a day and more ago: outside both windows
		if err := st.AppendCost(cost.Entry{At: start.Add(time.Duration(i) * time.Second), Agent: "a", USD: &one}); err != nil {
			t.Fatal(err)
		}
	}
	now := start.Add(25 * time.Hour)
	w := state.NewCostWindow(st)
	check := func() cost.Spent { // a Spent is one check
		return state.Spent(st, w, &state.Agent{Name: "a"}, func() time.Time { return now }, nil, func() float64 { return 0 })
	}
	sp := check()
	if usd := sp.Window(24 * time.Hour); usd != 0 || st.read != old {
		t.Fatalf("first check: $%v after reading %d entries, want $0 after %d", usd, st.read, old)
	}
	for call := 1; call <= 5; call++ {
		now = now.Add(10 * time.Minute)
		if err := st.AppendCost(cost.Entry{At: now, Agent: "a", USD: &one}); err != nil {
			t.Fatal(err)
		}
		st.read = 0
		sp = check()
		day, hour := sp.Window(24*time.Hour), sp.Window(time.Hour)
		if st.read != 1 {
			t.Fatalf("call %d: the check read %d entries, want the one new", call, st.read)
		}
		if day != float64(call) || hour != float64(min(call, 6)) {
			t.Fatalf("call %d: day $%v, hour $%v", call, day, hour)
		}
	}
	// An hour and more later, the hour's window holds none of them.
	now = now.Add(2 * time.Hour)
	sp = check()
	if hour, day := sp.Window(time.Hour), sp.Window(24*time.Hour); hour != 0 || day != 5 {
		t.Fatalf("later: hour $%v, day $%v", hour, day)
	}
}

// FitEntry keeps an entry over the limit cut, within the limit, still
// the JSON of its kind (the same keys, the strings' starts), each cut
// string ending with the mark; an entry under it is as json.Marshal
// writes it, and one with nothing long enough to cut is refused.
func TestFitEntry(t *testing.T) {
	const limit = 2000
	long := strings.Repeat("abcdefghij", 500)
	accents := strings.Repeat("é", 3000) // two bytes each: a cut never splits one
	for _, tc := range []struct {
		name    string
		v       any
		refused bool
	}{
		{"under the limit", map[string]string{"role": "user", "content": "hello"}, false},
		{"a long content", map[string]any{"role": "tool", "tool_call_id": "c1", "content": long}, false},
		{"a bare string", long, false},
		{"nested arguments", map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "c1", "function": map[string]any{"name": "write", "arguments": long}}}}, false},
		{"two long strings", map[string]string{"a": long, "b": long}, false},
		{"multi-byte text", map[string]string{"content": accents}, false},
		{"escaped text", map[string]string{"content": strings.Repeat("<\n\"", 2000)}, false},
		{"nothing to cut", strings.Split(strings.Repeat("x", 1500), ""), true},
	} {
		b, err := state.FitEntry(tc.v, limit)
		if tc.refused {
			if !errors.Is(err, state.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
			}
			continue
		}
		if err != nil || len(b) > limit || !json.Valid(b) || !utf8.Valid(b) {
			t.Errorf("%s: %d bytes (limit %d), valid %v, %v", tc.name, len(b), limit, json.Valid(b), err)
			continue
		}
		whole, _ := json.Marshal(tc.v)
		if len(whole) <= limit {
			if string(b) != string(whole) {
				t.Errorf("%s: changed under the limit: %s", tc.name, b)
			}
			continue
		}
		if !strings.Contains(string(b), "[pm cut ") || !strings.Contains(string(b), "one log entry is at most 2000 bytes (limits.log_entry_bytes)]") {
			t.Errorf("%s: no mark in %s", tc.name, b)
		}
	}
	// The cut keeps the message's other fields and its start.
	b, err := state.FitEntry(map[string]any{"role": "tool", "tool_call_id": "c1", "content": long}, limit)
	var m map[string]string
	if err != nil || json.Unmarshal(b, &m) != nil || m["role"] != "tool" || m["tool_call_id"] != "c1" || !strings.HasPrefix(m["content"], long[:1000]) {
		t.Fatalf("cut message %s, %v", b, err)
	}
	if got := state.EntryLimit(0); got != state.MaxEntry {
		t.Errorf("EntryLimit(0) = %d, want MaxEntry", got)
	}
	if got := state.EntryLimit(2 * state.MaxEntry); got != state.MaxEntry {
		t.Errorf("EntryLimit over MaxEntry = %d", got)
	}
}

// readsCounted is a ledger that counts its readers' passes over it.
type readsCounted struct {
	*memstate.Mem
	passes int
}

func (c *readsCounted) ReadCosts(from int64, fn func(e cost.Entry, next int64) error) (int64, error) {
	c.passes++
	return c.Mem.ReadCosts(from, fn)
}

func (c *readsCounted) Costs(since time.Time, fn func(e cost.Entry) error) error {
	c.passes++
	return c.Mem.Costs(since, fn)
}

// One dollar check reads the ledger once, however many of the project's
// windows it asks (a review found the hour's and the day's caps each read
// it: two round trips per model call on a hub), and both windows count
// what was recorded before it.
func TestOneCheckReadsTheLedgerOnce(t *testing.T) {
	st := &readsCounted{Mem: memstate.New()}
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	one := 1.0
	w := state.NewCostWindow(st)
	caps := cost.Caps{Hour: 100, Day: 100}
	for check := 1; check <= 3; check++ {
		if err := st.AppendCost(cost.Entry{At: now.Add(-time.Duration(check) * time.Minute), Agent: "a", USD: &one}); err != nil {
			t.Fatal(err)
		}
		st.passes = 0
		sp := state.Spent(st, w, &state.Agent{Name: "a"}, func() time.Time { return now }, nil, func() float64 { return 0 })
		if stop := caps.First(sp, 0, nil); stop != nil {
			t.Fatalf("check %d stopped: %+v", check, stop)
		}
		if st.passes != 1 {
			t.Fatalf("check %d read the ledger %d times, want once", check, st.passes)
		}
		if hour, day := sp.Window(time.Hour), sp.Window(24*time.Hour); hour != float64(check) || day != float64(check) {
			t.Fatalf("check %d: hour $%v, day $%v, want $%d each", check, hour, day, check)
		}
	}
}
