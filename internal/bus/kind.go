package bus

// Kind names what happened. The values are on disk (events.jsonl) and in
// scripts, so they never change; every kind pm writes is declared here.
type Kind string

// The lifecycle of the state directory.
const (
	EvInit  Kind = "init"
	EvReset Kind = "reset"
)

// Tasks.
const (
	EvTaskCreated   Kind = "task.created"
	EvTaskUnblocked Kind = "task.unblocked"
	EvTaskDone      Kind = "task.done"
	EvTaskKilled    Kind = "task.killed"
	EvTaskRestarted Kind = "task.restarted"
	EvChildDone     Kind = "task.child_done"
	EvCommit        Kind = "git.commit"
	EvMerge         Kind = "git.merge"     // a task's branch merged into its parent's (data: into, hash, files)
	EvMergeWaits    Kind = "git.waits"     // a task's merge waits: conflict, local changes or review (data: state, paths)
	EvTaskRejected  Kind = "task.rejected" // the human rejected a task's work: its owner works on
)

// Phases and their messages.
const (
	EvPhaseOpened   Kind = "phase.opened"
	EvPhaseExtended Kind = "phase.extended"
	EvPhaseClosed   Kind = "phase.closed"
	EvMessage       Kind = "message.posted"
)

// Agents: their records, the supervisor's actions and an llm agent's turns.
const (
	EvAgentCreated   Kind = "agent.created"
	EvAgentStarted   Kind = "agent.started"
	EvAgentExited    Kind = "agent.exited"
	EvAgentKilled    Kind = "agent.killed"
	EvAgentRespawned Kind = "agent.respawned"
	EvAgentFailed    Kind = "agent.failed"
	EvAgentBudget    Kind = "agent.budget"
	EvAgentThink     Kind = "agent.think"
	EvAgentOutput    Kind = "agent.output"   // a piece of a role or owner agent's streamed model text
	EvAgentTurn      Kind = "agent.turn"     // a model response ended; data: the agent's usage
	EvAgentActivity  Kind = "agent.activity" // an llm agent's activity changed; text: idle, working or waiting
	EvToolCall       Kind = "tool.call"
	EvToolResult     Kind = "tool.result"
	// Code-designer mode: a call held back with its doc's first lines, and
	// the model's decision on it (confirmed, revised, dropped).
	EvToolDocPreview  Kind = "tool.doc_preview"
	EvToolDocDecision Kind = "tool.doc_decision"
)

// Prompt-object messages (inboxes), one kind per inbox message kind.
const (
	EvInbox     Kind = "inbox.message"
	EvPONotice  Kind = "po.notice"
	EvPORequest Kind = "po.request"
	EvPOReply   Kind = "po.reply"
)

// Requests for the human and capabilities.
const (
	EvRequestAsked      Kind = "request.asked"
	EvRequestAnswered   Kind = "request.answered"
	EvRequestMoot       Kind = "request.moot"
	EvCapabilityCreated Kind = "capability.created"
)

// The code designer (pm design): each request, response, supervisor plan
// and state change of a design's log, correlated by request id in Data.
const (
	EvDesignRequest  Kind = "design.request"
	EvDesignResponse Kind = "design.response"
	EvDesignPlan     Kind = "design.plan"
	EvDesignState    Kind = "design.state"
)

// POKind is the kind of the event that announces an inbox message of kind k
// (inbox.KindNotice, KindRequest, KindReply): "po." and the inbox kind.
func POKind(k string) Kind {
	return "po." + Kind(k)
}

// Kinds are every kind declared above (TestKindsListsEveryConstant keeps the
// list whole), for what checks a kind a person typed (pm log --kind).
var Kinds = []Kind{
	EvInit, EvReset,
	EvTaskCreated, EvTaskUnblocked, EvTaskDone, EvTaskKilled, EvTaskRestarted, EvChildDone, EvCommit, EvMerge, EvMergeWaits, EvTaskRejected,
	EvPhaseOpened, EvPhaseExtended, EvPhaseClosed, EvMessage,
	EvAgentCreated, EvAgentStarted, EvAgentExited, EvAgentKilled, EvAgentRespawned, EvAgentFailed,
	EvAgentBudget, EvAgentThink, EvAgentOutput, EvAgentTurn, EvAgentActivity, EvToolCall, EvToolResult,
	EvToolDocPreview, EvToolDocDecision,
	EvInbox, EvPONotice, EvPORequest, EvPOReply,
	EvRequestAsked, EvRequestAnswered, EvRequestMoot, EvCapabilityCreated,
	EvDesignRequest, EvDesignResponse, EvDesignPlan, EvDesignState,
}
