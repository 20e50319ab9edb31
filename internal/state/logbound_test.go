package state_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/state"
)

// PlanCut drops the fewest entries that bring a log to keep, at the best
// kind of place that does: a turn, else a step, else a reply's later
// piece, else the latest place there is; never before a tool result.
func TestPlanCut(t *testing.T) {
	const (
		N = state.NoCut
		P = state.PieceCut
		S = state.StepCut
		T = state.TurnCut
	)
	for _, tc := range []struct {
		name  string
		kinds []int
		keep  int64
		want  int
	}{
		{"under keep", []int{T, S, N, T}, 40, 0},
		{"the first turn that drops enough", []int{T, S, N, T, S, N, T}, 40, 3},
		{"a step when no turn drops enough", []int{T, S, N, S, N, S, N}, 30, 5},
		{"a turn preferred to an earlier step", []int{T, S, N, S, T, N}, 40, 4},
		{"a reply's piece when no reply starts after", []int{T, P, P, P, P, P}, 20, 4},
		{"a reply's start preferred to a piece", []int{T, P, P, T, P, P}, 40, 3},
		{"the last step alone over keep: its start", []int{T, S, N, N, N, N}, 20, 1},
		{"no place at all", []int{T, N, N, N}, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := make([]state.Entry, len(tc.kinds))
			for i, k := range tc.kinds {
				entries[i] = state.Entry{Size: 10, Kind: k}
			}
			if got := state.PlanCut(entries, int64(10*len(entries)), tc.keep); got != tc.want {
				t.Errorf("PlanCut = %d, want %d", got, tc.want)
			}
		})
	}
}

// A limits.log_entry_bytes a config may still say but over MaxEntry (it
// was the most once) means MaxEntry: no entry is made that a stream or a
// file refuses.
func TestEntryLimitClampsWhatConfigsAccept(t *testing.T) {
	for _, c := range []int{0, -1, config.LogEntryBytesAccepted, state.MaxEntry + 1} {
		if got := state.EntryLimit(c); got != state.MaxEntry {
			t.Errorf("EntryLimit(%d) = %d, want MaxEntry %d", c, got, state.MaxEntry)
		}
	}
	if got := state.EntryLimit(4096); got != 4096 {
		t.Errorf("EntryLimit(4096) = %d", got)
	}
}
