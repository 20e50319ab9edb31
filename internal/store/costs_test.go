package store_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/cost"
)

// A call recorded while its model had no price is unknown; once the human
// adds the price (pm costs' hint: "add it to prices in config.json"), the
// ledger reads it priced, in pm costs and in the project's windows alike.
// A model still without a price stays unknown, never $0, and a figure the
// runtime reported is kept as it was.
func TestCostsPriceUnknownEntriesWhenThePriceIsAdded(t *testing.T) {
	s, _ := newStore(t)
	reported := 0.5
	for _, e := range []cost.Entry{
		{Agent: "a", Runtime: "llm", Model: "house-model", Turns: 1, Usage: &cost.Usage{Input: 1_000_000, Output: 1_000_000}},
		{Agent: "b", Runtime: "llm", Model: "other-model", Turns: 1, Usage: &cost.Usage{Input: 1_000_000}},
		{Agent: "c", Runtime: "exec", Model: "house-model", Turns: 1, Usage: &cost.Usage{Input: 1_000_000}, USD: &reported, Source: cost.SourceReported},
	} {
		if _, err := s.AppendCost(e); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.Costs(); got[0].USD != nil {
		t.Fatalf("unpriced call read as $%v", *got[0].USD)
	}
	s.Config().Prices = append(s.Config().Prices, cost.Price{Model: "house-model", Input: 1, Output: 2})
	got, err := s.Costs()
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
}
