package ops

import (
	"testing"

	"github.com/plasmodium/pm/internal/bus"
)

// Talk, streamed text, tool steps and design steps do not wake pm wait nor
// make the dashboard read a task's health; lifecycle events do. A kind not
// listed (added later) wakes nobody. Before, the list named the kinds that
// did not, and po.*, tool.doc_* and design.* woke every waiter.
func TestChangesState(t *testing.T) {
	for _, c := range []struct {
		kind bus.Kind
		want bool
	}{
		{bus.EvTaskDone, true}, {bus.EvTaskKilled, true}, {bus.EvAgentExited, true}, {bus.EvAgentFailed, true},
		{bus.EvPhaseClosed, true}, {bus.EvRequestAsked, true}, {bus.EvRequestAnswered, true}, {bus.EvReset, true},
		{bus.EvMessage, false}, {bus.EvAgentOutput, false}, {bus.EvAgentTurn, false}, {bus.EvAgentActivity, false},
		{bus.EvToolCall, false}, {bus.EvToolResult, false}, {bus.EvPORequest, false}, {bus.EvPOReply, false},
		{bus.EvPONotice, false}, {bus.EvToolDocPreview, false}, {bus.EvToolDocDecision, false},
		{bus.EvDesignRequest, false}, {bus.EvDesignPlan, false}, {bus.EvDesignState, false},
		{bus.Kind("some.new_kind"), false},
	} {
		if got := ChangesState(c.kind); got != c.want {
			t.Errorf("ChangesState(%s) = %v, want %v", c.kind, got, c.want)
		}
	}
}
