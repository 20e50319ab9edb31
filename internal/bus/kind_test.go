package bus

import "testing"

// The kinds are on disk and in scripts: their values never change.
func TestKindValues(t *testing.T) {
	cases := []struct {
		kind Kind
		want string
	}{
		{EvInit, "init"}, {EvReset, "reset"},
		{EvTaskCreated, "task.created"}, {EvTaskUnblocked, "task.unblocked"}, {EvTaskDone, "task.done"},
		{EvTaskKilled, "task.killed"}, {EvTaskRestarted, "task.restarted"}, {EvChildDone, "task.child_done"},
		{EvCommit, "git.commit"},
		{EvPhaseOpened, "phase.opened"}, {EvPhaseExtended, "phase.extended"}, {EvPhaseClosed, "phase.closed"},
		{EvMessage, "message.posted"},
		{EvAgentCreated, "agent.created"}, {EvAgentStarted, "agent.started"}, {EvAgentExited, "agent.exited"},
		{EvAgentKilled, "agent.killed"}, {EvAgentRespawned, "agent.respawned"}, {EvAgentFailed, "agent.failed"},
		{EvAgentBudget, "agent.budget"}, {EvAgentThink, "agent.think"},
		{EvAgentOutput, "agent.output"}, {EvAgentTurn, "agent.turn"}, {EvAgentActivity, "agent.activity"},
		{EvToolCall, "tool.call"}, {EvToolResult, "tool.result"},
		{EvToolDocPreview, "tool.doc_preview"}, {EvToolDocDecision, "tool.doc_decision"},
		{EvInbox, "inbox.message"}, {EvPONotice, "po.notice"}, {EvPORequest, "po.request"}, {EvPOReply, "po.reply"},
		{EvRequestAsked, "request.asked"}, {EvRequestAnswered, "request.answered"},
		{EvCapabilityCreated, "capability.created"},
		{EvDesignRequest, "design.request"}, {EvDesignResponse, "design.response"},
		{EvDesignPlan, "design.plan"}, {EvDesignState, "design.state"},
		{POKind("notice"), "po.notice"}, {POKind("reply"), "po.reply"},
	}
	for _, c := range cases {
		if string(c.kind) != c.want {
			t.Errorf("kind %q, want %q", c.kind, c.want)
		}
	}
}
