package design

import (
	"encoding/json"
	"time"

	"github.com/plasmodium/pm/internal/llm"
)

// Angle is one perspective a unit is reviewed from (P003): a prompt object
// under prompts/angles/ whose body is the system prompt.
type Angle struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	System   string   `json:"system_prompt"`
	Criteria []string `json:"evaluation_criteria"`
	Weight   float64  `json:"weight"`
}

// Severity of an Issue.
type Severity string

// Severities, from least to most serious.
const (
	SeverityLow      Severity = "low"
	SeverityMedium   Severity = "medium"
	SeverityHigh     Severity = "high"
	SeverityCritical Severity = "critical"
)

// Severities lists the valid severities, least serious first.
var Severities = []Severity{SeverityLow, SeverityMedium, SeverityHigh, SeverityCritical}

// Location is where an issue is, in lines of the unit (1-based).
type Location struct {
	Line   int  `json:"line" jsonschema:"1-based line within the code under review"`
	Column *int `json:"column,omitempty" jsonschema:"1-based column, when known"`
}

// Issue is one problem an angle found.
type Issue struct {
	Severity     Severity `json:"severity" jsonschema:"one of low, medium, high, critical"`
	Location     Location `json:"location"`
	Description  string   `json:"description" jsonschema:"what is wrong, in one or two sentences"`
	SuggestedFix string   `json:"suggested_fix,omitempty" jsonschema:"how to fix it, when known"`
	// Angle is filled in by the engine (the reply need not repeat it).
	Angle string `json:"angle,omitempty" jsonschema:"filled in by pm; leave it out"`
}

// AngleResult is an angle's review of one unit in one pass: the structured
// output the worker model must return for a verify request.
type AngleResult struct {
	AngleID     string   `json:"angle_id" jsonschema:"the id of the angle reviewing"`
	IssuesFound []Issue  `json:"issues_found" jsonschema:"problems found from this angle; empty when none"`
	Suggestions []string `json:"suggestions" jsonschema:"improvement recommendations; empty when none"`
	Confidence  float64  `json:"confidence" jsonschema:"0 to 1: how sure the review is"`
	PassNumber  int      `json:"pass_number" jsonschema:"the pass number given in the request"`
}

// RequestType is what a SupervisorRequest asks the worker to do (P004).
type RequestType string

// Request types.
const (
	RequestToolCall RequestType = "tool_call"
	RequestVerify   RequestType = "verify"
	RequestRefine   RequestType = "refine"
	RequestAnalyze  RequestType = "analyze"
)

// Payload is the type-specific part of a request; only the fields of its
// type are set (tool_call: ToolName, Arguments; verify: Code, AngleID,
// Criteria; refine: Code, Issues, Preserve; analyze: Code, Questions).
type Payload struct {
	ToolName  string          `json:"tool_name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Code      string          `json:"code,omitempty"`
	AngleID   string          `json:"angle_id,omitempty"`
	Criteria  []string        `json:"criteria,omitempty"`
	Issues    []Issue         `json:"issues,omitempty"`
	Preserve  []string        `json:"preserve,omitempty"`
	Questions []string        `json:"questions,omitempty"`
}

// RequestContext is everything the worker needs: requests are stateless.
type RequestContext struct {
	OriginalRequest string           `json:"original_request"`
	CurrentCode     string           `json:"current_code,omitempty"`
	PassNumber      int              `json:"pass_number"`
	AngleID         string           `json:"angle_id,omitempty"`
	History         []WorkerResponse `json:"history,omitempty"`
}

// Constraints bound the worker's answer.
type Constraints struct {
	MaxTokens    int      `json:"max_tokens,omitempty"`
	TimeoutMS    int64    `json:"timeout_ms,omitempty"`
	MustPreserve []string `json:"must_preserve,omitempty"`
}

// SupervisorRequest is one piece of work the supervisor hands the worker.
// Verify requests (one per angle, every pass) are issued by the engine on
// the supervisor's behalf; the others come from the supervisor model's Plan.
type SupervisorRequest struct {
	RequestID   string         `json:"request_id"`
	Type        RequestType    `json:"type"`
	Unit        int            `json:"unit"`
	Payload     Payload        `json:"payload"`
	Context     RequestContext `json:"context"`
	Constraints Constraints    `json:"constraints"`
}

// ResponseStatus is how a worker request ended.
type ResponseStatus string

// Response statuses.
const (
	ResponseSuccess    ResponseStatus = "success"
	ResponsePartial    ResponseStatus = "partial"
	ResponseError      ResponseStatus = "error"
	ResponseNeedsInput ResponseStatus = "needs_input"
)

// Metrics is what one model call (with its retries) cost.
type Metrics struct {
	TokensUsed int64  `json:"tokens_used"`
	DurationMS int64  `json:"duration_ms"`
	Model      string `json:"model"`
}

// WorkerError is a failed request. Recoverable errors leave the unit as it
// was and the loop goes on; others end the design in the error state.
type WorkerError struct {
	Code        string `json:"code"`
	Message     string `json:"message"`
	Recoverable bool   `json:"recoverable"`
}

// WorkerResponse answers one SupervisorRequest (same RequestID).
type WorkerResponse struct {
	RequestID    string          `json:"request_id"`
	Status       ResponseStatus  `json:"status"`
	Result       json.RawMessage `json:"result,omitempty"`
	Observations []string        `json:"observations,omitempty"`
	Metrics      Metrics         `json:"metrics"`
	Error        *WorkerError    `json:"error,omitempty"`
}

// Modification is one change the worker made to a unit, and why.
type Modification struct {
	Pass    int    `json:"pass"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Reason  string `json:"reason"`
	AngleID string `json:"angle_id,omitempty"`
}

// PassResult is one pass over a unit: every angle's review, what changed.
type PassResult struct {
	PassNumber    int            `json:"pass_number"`
	AnglesRun     []AngleResult  `json:"angles_run"`
	Modifications []Modification `json:"modifications"`
	IssueCount    int            `json:"issue_count"`
	Converged     bool           `json:"converged"`
}

// Unit is what the loop reviews at a time (the seed's "line"): a Go
// top-level declaration or a blank-line block of another language. The
// units of a file are contiguous: their contents concatenated are the file.
type Unit struct {
	Number          int          `json:"number"`
	Name            string       `json:"name"`
	StartLine       int          `json:"start_line"`
	OriginalContent string       `json:"original_content"`
	CurrentContent  string       `json:"current_content"`
	IsModified      bool         `json:"is_modified"`
	PassHistory     []PassResult `json:"pass_history"`
	Status          Status       `json:"status,omitempty"`
}

// Usage is what one role's model spent over a design.
type Usage struct {
	Model      string `json:"model"`
	Calls      int64  `json:"calls"`
	Tokens     int64  `json:"tokens"`
	DurationMS int64  `json:"duration_ms"`
}

// Cursor is where the loop is: the unit, the pass within it and the next
// angle (len(angles) once every angle ran: the supervisor decides next).
type Cursor struct {
	Unit  int `json:"unit"`
	Pass  int `json:"pass"`
	Angle int `json:"angle"`
}

// State is a whole design (the seed's ProcessingState), saved after every
// step so an interrupted design resumes at its Cursor.
type State struct {
	ID         string   `json:"id"`
	SourceFile string   `json:"source_file"`
	SourceHash string   `json:"source_hash"`
	Goal       string   `json:"goal"`
	Angles     []string `json:"angles"`
	MaxPasses  int      `json:"max_passes"`
	// TestCommand, when set, is what the supervisor's "test" tool runs on
	// the candidate (kept so a resumed design keeps its tool).
	TestCommand string            `json:"test_command,omitempty"`
	Criteria    Criteria          `json:"criteria"`
	Status      Status            `json:"status"`
	Outcome     Status            `json:"outcome,omitempty"`
	Error       string            `json:"error,omitempty"`
	Units       []Unit            `json:"units"`
	Cursor      Cursor            `json:"cursor"`
	Current     *PassResult       `json:"current,omitempty"`
	Usage       map[string]*Usage `json:"usage"`
	// History is the current unit's recent worker responses, the context
	// of the next requests.
	History []WorkerResponse `json:"history,omitempty"`
	// Spent and ActiveMS are what budgets count, kept across resumes.
	Spent     llm.Counters `json:"spent"`
	ActiveMS  int64        `json:"active_ms"`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt time.Time    `json:"updated_at"`
}

// Content is the file as the design has it now.
func (s *State) Content() string {
	var n int
	for _, u := range s.Units {
		n += len(u.CurrentContent)
	}
	b := make([]byte, 0, n)
	for _, u := range s.Units {
		b = append(b, u.CurrentContent...)
	}
	return string(b)
}

// Original is the file as the design found it.
func (s *State) Original() string {
	var b []byte
	for _, u := range s.Units {
		b = append(b, u.OriginalContent...)
	}
	return string(b)
}
