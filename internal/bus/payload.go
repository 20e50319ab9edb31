package bus

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Payload is an event's data: one struct per Kind, all declared in this
// file (PayloadFor says which kind carries which), so a publisher fills
// and a reader reads fields the compiler knows instead of a map's keys.
// Each struct's fields are in the order of their JSON keys, which is the
// order encoding/json wrote the map they replace in, so events.jsonl and
// the dashboard's frames are byte for byte what they were
// (TestPayloadsRoundTrip).
//
// A reader type-switches on Data (or asserts the kind's type: the zero
// value when the event carries none). Data is nil for an event without
// data, and Other for data this pm does not know the shape of (an unknown
// kind, a line written by another version): nothing read is dropped.
type Payload interface{ payload() }

// The lifecycle of the state directory.
type (
	// Reset is pm reset: how many tasks there were and the agents it killed.
	Reset struct {
		Killed []string `json:"killed"`
		Tasks  int      `json:"tasks"`
	}
)

// Tasks.
type (
	// TaskCreated carries what the dashboard needs to place the task.
	TaskCreated struct {
		BlockedBy []string `json:"blocked_by"`
		Depth     int      `json:"depth"`
		ParentID  string   `json:"parent_id"`
		Runtime   string   `json:"runtime"`
		Status    string   `json:"status"`
	}
	// TaskDone is pm done's outcome; the commit's hash is also the
	// git.commit event's text.
	TaskDone struct {
		Commit    string `json:"commit"`
		Held      bool   `json:"held"`
		Merged    string `json:"merged,omitempty"` // a merge that waited, done later (pm merge)
		NoChanges bool   `json:"no_changes"`
		NoRepo    bool   `json:"no_repo"`
	}
	// Merge is a task's branch merged into the branch it started from.
	Merge struct {
		FastForward bool   `json:"fast_forward"`
		Files       int    `json:"files"`
		Into        string `json:"into"`
	}
	// MergeWaits is a merge that waits: its state (conflict, local
	// changes, review) and the paths concerned.
	MergeWaits struct {
		Into  string   `json:"into"`
		Paths []string `json:"paths"`
		State string   `json:"state"`
	}
	// ChildDone tells a parent task which child finished.
	ChildDone struct {
		Child string `json:"child"`
	}
	// Commit is what pm done committed (Files paths) and left out
	// (Excluded: untracked files that look like secrets).
	Commit struct {
		Excluded []string `json:"excluded"`
		Files    int      `json:"files"`
	}
)

// Phases and their messages.
type (
	// PhaseOpened is a room's shape; the event's text is its name.
	PhaseOpened struct {
		Limit int      `json:"limit"`
		Roles []string `json:"roles"`
		Rules string   `json:"rules"`
	}
	// PhaseExtended is pm extend-phase: by how much, and the new limit.
	PhaseExtended struct {
		By    int `json:"by"`
		Limit int `json:"limit"`
	}
	// PhaseClosed is the room's count when it closed; the text is the reason.
	PhaseClosed struct {
		Limit    int `json:"limit"`
		Messages int `json:"messages"`
	}
	// MessagePosted is the message's place in its room: the n-th of limit.
	MessagePosted struct {
		Limit int `json:"limit"`
		N     int `json:"n"`
	}
)

// Agents.
type (
	// AgentCreated is a new agent record.
	AgentCreated struct {
		Prompt  string `json:"prompt"`
		Role    string `json:"role"`
		Runtime string `json:"runtime"`
	}
	// AgentStarted is a host started for the agent.
	AgentStarted struct {
		Pid      int    `json:"pid"`
		Restarts int    `json:"restarts"`
		Role     string `json:"role"`
	}
	// AgentExited is the host's exit code; the text says why it left.
	AgentExited struct {
		ExitCode int `json:"exit_code"`
	}
	// AgentFailed is the exit code of a host that recorded its agent
	// failed (the text is the reason); the supervisor's give-up after a
	// crash loop has no exit code and carries none.
	AgentFailed struct {
		ExitCode int `json:"exit_code"`
	}
	// AgentKilled names the process (group) that was ended.
	AgentKilled struct {
		Pid int `json:"pid"`
	}
	// AgentRespawned counts the supervisor's restarts of the agent.
	AgentRespawned struct {
		Restarts int `json:"restarts"`
	}
	// AgentOutput is a piece of streamed model text (the event's text);
	// Retry says the attempt's text streamed so far is to be dropped.
	AgentOutput struct {
		Retry bool `json:"retry,omitempty"`
	}
	// AgentTurn is an llm agent's usage after a model response; USD is
	// this call's dollars, nil (null) when unknown, never 0 for unknown.
	AgentTurn struct {
		Tokens    int64    `json:"tokens"`
		ToolCalls int64    `json:"tool_calls"`
		Turns     int64    `json:"turns"`
		USD       *float64 `json:"usd"`
	}
	// ToolCall is a model's tool call (the text: tool and arguments). Cause
	// is the inbox call being answered; Message marks a call that is a
	// message itself (to a prompt object, ask_human), which the message
	// log shows once, by its messages.
	ToolCall struct {
		Cause   string `json:"cause,omitempty"`
		Message bool   `json:"message,omitempty"`
	}
	// ToolResult is a tool call's result (the text), as ToolCall, and
	// whether it failed or was refused.
	ToolResult struct {
		Cause   string `json:"cause,omitempty"`
		Error   bool   `json:"error"`
		Message bool   `json:"message,omitempty"`
	}
	// ToolDocPreview is a call held back by code-designer mode while the
	// model reads the tool's doc (the text).
	ToolDocPreview struct {
		Args   string `json:"args"`
		CallID string `json:"call_id"`
		Tool   string `json:"tool"`
	}
	// ToolDocDecision is the model's decision on a previewed call:
	// confirmed, revised or dropped.
	ToolDocDecision struct {
		Args     string `json:"args"`
		CallID   string `json:"call_id"`
		Decision string `json:"decision"`
		Tool     string `json:"tool"`
	}
)

// Prompt-object messages, requests and capabilities.
type (
	// POMessage is an inbox message (po.notice, po.request, po.reply: the
	// three kinds of one inbox record): Corr is its call id, Cause the call
	// its sender was answering.
	POMessage struct {
		Cause string `json:"cause,omitempty"`
		Corr  string `json:"corr"`
	}
	// RequestAsked names the request (rq-..), the call it was asked in, the
	// agent it is about (one pm filed when it gave up on that agent) and,
	// for one pm files itself, its kind (a confirmation, a loop).
	RequestAsked struct {
		About   string `json:"about,omitempty"`
		Cause   string `json:"cause,omitempty"`
		Kind    string `json:"kind,omitempty"`
		Request string `json:"request"`
	}
	// RequestAnswered names the request answered (the text is the answer).
	RequestAnswered struct {
		Request string `json:"request"`
	}
	// RequestMoot names a request nobody can act on any more (the text
	// says why).
	RequestMoot struct {
		Request string `json:"request"`
	}
	// CapabilityCreated is a prompt object made by create_capability.
	CapabilityCreated struct {
		Capabilities []string `json:"capabilities"`
		Description  string   `json:"description"`
		Name         string   `json:"name"`
		Path         string   `json:"path"`
	}
)

// The code designer: every event names the design, unit and pass.
type (
	// DesignRequest is a supervisor's request to a worker.
	DesignRequest struct {
		Design    string `json:"design"`
		Pass      int    `json:"pass"`
		RequestID string `json:"request_id"`
		Type      string `json:"type"`
		Unit      int    `json:"unit"`
	}
	// DesignResponse is a worker's response and what it cost.
	DesignResponse struct {
		Design     string `json:"design"`
		DurationMS int64  `json:"duration_ms"`
		Model      string `json:"model"`
		Pass       int    `json:"pass"`
		RequestID  string `json:"request_id"`
		Status     string `json:"status"`
		Tokens     int64  `json:"tokens"`
		Unit       int    `json:"unit"`
	}
	// DesignPlan is the supervisor's plan for a unit.
	DesignPlan struct {
		Design string `json:"design"`
		Pass   int    `json:"pass"`
		Type   string `json:"type"`
		Unit   int    `json:"unit"`
	}
	// DesignState is a change of the design's status.
	DesignState struct {
		Design string `json:"design"`
		Pass   int    `json:"pass"`
		Status string `json:"status"`
		Unit   int    `json:"unit"`
	}
)

// Other is data whose shape this pm does not know: an unknown kind's, or
// a line another version wrote that does not fit its kind's struct. It is
// kept as decoded, so nothing read is lost.
type Other map[string]any

func (Reset) payload()             {}
func (TaskCreated) payload()       {}
func (TaskDone) payload()          {}
func (ChildDone) payload()         {}
func (Commit) payload()            {}
func (PhaseOpened) payload()       {}
func (PhaseExtended) payload()     {}
func (PhaseClosed) payload()       {}
func (MessagePosted) payload()     {}
func (AgentCreated) payload()      {}
func (AgentStarted) payload()      {}
func (AgentExited) payload()       {}
func (AgentFailed) payload()       {}
func (AgentKilled) payload()       {}
func (AgentRespawned) payload()    {}
func (AgentOutput) payload()       {}
func (AgentTurn) payload()         {}
func (ToolCall) payload()          {}
func (ToolResult) payload()        {}
func (ToolDocPreview) payload()    {}
func (ToolDocDecision) payload()   {}
func (POMessage) payload()         {}
func (Merge) payload()             {}
func (MergeWaits) payload()        {}
func (RequestAsked) payload()      {}
func (RequestMoot) payload()       {}
func (RequestAnswered) payload()   {}
func (CapabilityCreated) payload() {}
func (DesignRequest) payload()     {}
func (DesignResponse) payload()    {}
func (DesignPlan) payload()        {}
func (DesignState) payload()       {}
func (Other) payload()             {}

// PayloadFor is the payload kind k carries, as a zero value: nil for a
// kind that carries none (its text says it all). known is false for a
// kind this pm does not declare. It is a switch, not a table, so a
// process that never decodes an event pays nothing for it at start.
func PayloadFor(k Kind) (p Payload, known bool) {
	switch k {
	case EvInit, EvTaskUnblocked, EvTaskKilled, EvTaskRestarted, EvTaskRejected, EvAgentBudget,
		EvAgentThink, EvAgentActivity, EvInbox:
		return nil, true
	case EvReset:
		return Reset{}, true
	case EvTaskCreated:
		return TaskCreated{}, true
	case EvTaskDone:
		return TaskDone{}, true
	case EvChildDone:
		return ChildDone{}, true
	case EvCommit:
		return Commit{}, true
	case EvMerge:
		return Merge{}, true
	case EvMergeWaits:
		return MergeWaits{}, true
	case EvPhaseOpened:
		return PhaseOpened{}, true
	case EvPhaseExtended:
		return PhaseExtended{}, true
	case EvPhaseClosed:
		return PhaseClosed{}, true
	case EvMessage:
		return MessagePosted{}, true
	case EvAgentCreated:
		return AgentCreated{}, true
	case EvAgentStarted:
		return AgentStarted{}, true
	case EvAgentExited:
		return AgentExited{}, true
	case EvAgentFailed:
		return AgentFailed{}, true
	case EvAgentKilled:
		return AgentKilled{}, true
	case EvAgentRespawned:
		return AgentRespawned{}, true
	case EvAgentOutput:
		return AgentOutput{}, true
	case EvAgentTurn:
		return AgentTurn{}, true
	case EvToolCall:
		return ToolCall{}, true
	case EvToolResult:
		return ToolResult{}, true
	case EvToolDocPreview:
		return ToolDocPreview{}, true
	case EvToolDocDecision:
		return ToolDocDecision{}, true
	case EvPONotice, EvPORequest, EvPOReply:
		return POMessage{}, true
	case EvRequestAsked:
		return RequestAsked{}, true
	case EvRequestAnswered:
		return RequestAnswered{}, true
	case EvRequestMoot:
		return RequestMoot{}, true
	case EvCapabilityCreated:
		return CapabilityCreated{}, true
	case EvDesignRequest:
		return DesignRequest{}, true
	case EvDesignResponse:
		return DesignResponse{}, true
	case EvDesignPlan:
		return DesignPlan{}, true
	case EvDesignState:
		return DesignState{}, true
	}
	return nil, false
}

// checkPayload refuses an event whose data is not its kind's struct (a
// publisher's mistake, which a reader would decode as Other): what is
// written is always what PayloadFor reads back.
func checkPayload(ev Event) error {
	if ev.Data == nil {
		return nil
	}
	want, known := PayloadFor(ev.Kind)
	if _, other := ev.Data.(Other); other && !known {
		return nil
	}
	if want == nil || reflect.TypeOf(want) != reflect.TypeOf(ev.Data) {
		return &PayloadError{Kind: ev.Kind, Got: reflect.TypeOf(ev.Data), Want: reflect.TypeOf(want)}
	}
	return nil
}

// PayloadError is an event published with data of the wrong type.
type PayloadError struct {
	Kind      Kind
	Got, Want reflect.Type // Want is nil for a kind without data
}

func (e *PayloadError) Error() string {
	if e.Want == nil {
		return "bus: " + string(e.Kind) + " carries no data, got " + e.Got.String()
	}
	return "bus: " + string(e.Kind) + " carries " + e.Want.String() + ", got " + e.Got.String()
}

// decodePayload reads an event's data as its kind's struct. Data that does
// not fit it exactly (a key it does not have, a value of another type:
// another version's line, an unknown kind's) comes back as Other, whole.
func decodePayload(k Kind, raw []byte) (Payload, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if zero, _ := PayloadFor(k); zero != nil {
		p := reflect.New(reflect.TypeOf(zero))
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if dec.Decode(p.Interface()) == nil {
			return p.Elem().Interface().(Payload), nil
		}
	}
	var o Other
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	return o, nil
}
