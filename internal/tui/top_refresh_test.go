package tui

import (
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/plasmodium/pm/internal/bus"
)

// TestTopSnapshotsOnlyWhatPanelsShow counts the snapshots pm top reads for
// a stream of events: none for streamed text, activity and tool events (the
// tail shows them), one per panel-changing event, and one more, not one per
// event, for a burst that arrives while a snapshot is in flight.
func TestTopSnapshotsOnlyWhatPanelsShow(t *testing.T) {
	noisy := []bus.Kind{bus.EvAgentOutput, bus.EvAgentActivity, bus.EvAgentThink, bus.EvToolCall,
		bus.EvToolResult, bus.EvToolDocPreview, bus.EvToolDocDecision}
	repeat := func(k bus.Kind, n int) []bus.Kind {
		ks := make([]bus.Kind, n)
		for i := range ks {
			ks[i] = k
		}
		return ks
	}
	for _, tc := range []struct {
		name   string
		kinds  []bus.Kind
		burst  bool // events arrive before any snapshot lands
		want   int
		detail string
	}{
		{"tool and text burst", append(repeat(bus.EvToolCall, 40), noisy...), false, 0, "the tail only"},
		{"panel changes one by one", []bus.Kind{bus.EvTaskCreated, bus.EvMessage, bus.EvRequestAsked,
			bus.EvAgentTurn, bus.EvPhaseClosed}, false, 5, "one each"},
		{"messages while reading", repeat(bus.EvMessage, 20), true, 2, "the first, then one for the rest"},
		{"noise while reading", append([]bus.Kind{bus.EvTaskCreated}, repeat(bus.EvAgentOutput, 20)...), true, 1, "noise marks nothing stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snaps := 0
			be := TopBackend{Snapshot: func(context.Context) (TopData, error) { snaps++; return TopData{}, nil }}
			m := NewTop(context.Background(), be, time.UTC)
			var pending []tea.Cmd
			for _, k := range tc.kinds {
				_, cmd := m.Update(busMsg{bus.Event{Kind: k, Time: time.Unix(0, 0)}})
				if tc.burst {
					pending = append(pending, cmd)
				} else {
					drain(m, cmd)
				}
			}
			for _, cmd := range pending {
				drain(m, cmd)
			}
			if snaps != tc.want {
				t.Errorf("%d snapshots for %d events, want %d (%s)", snaps, len(tc.kinds), tc.want, tc.detail)
			}
		})
	}
}

// drain runs cmd and feeds what it returns back to m until nothing is left,
// as the bubbletea loop would.
func drain(m *Top, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			drain(m, c)
		}
	default:
		_, next := m.Update(msg)
		drain(m, next)
	}
}
