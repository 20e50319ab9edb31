package state_test

import (
	"testing"
	"time"

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
	sp := state.Spent(st, &state.Agent{Name: "a"}, func() time.Time { return now.Add(time.Minute) }, prices, func() float64 { return 0 })
	if usd := sp.Window(time.Hour); usd != 3.5 {
		t.Errorf("the last hour's dollars = %v, want 3.5", usd)
	}
	if usd := sp.Window(time.Second); usd != 0 {
		t.Errorf("the last second's dollars = %v, want 0 (every entry is older)", usd)
	}
}
