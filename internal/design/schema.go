package design

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Plan is the supervisor's structured answer after a pass's reviews: the
// next request for the worker. Type verify means "nothing to change": the
// next pass verifies again.
type Plan struct {
	Type      RequestType    `json:"type" jsonschema:"verify (nothing to change), refine, analyze or tool_call"`
	Context   string         `json:"context" jsonschema:"what you want accomplished, for the worker"`
	Issues    []Issue        `json:"issues" jsonschema:"refine: the issues the worker must fix"`
	Preserve  []string       `json:"preserve" jsonschema:"refine: what must not change"`
	Questions []string       `json:"questions" jsonschema:"analyze: what the worker must answer"`
	ToolName  string         `json:"tool_name,omitempty" jsonschema:"tool_call: the tool to run"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"tool_call: its arguments"`
}

// WorkResult is the worker's structured answer to a refine or analyze
// request.
type WorkResult struct {
	Status       ResponseStatus `json:"status" jsonschema:"success, partial, error or needs_input"`
	Code         string         `json:"code,omitempty" jsonschema:"refine: the whole unit, rewritten"`
	Answer       string         `json:"answer,omitempty" jsonschema:"analyze: the answers"`
	Reason       string         `json:"reason" jsonschema:"why you changed what you changed, or why you could not"`
	Observations []string       `json:"observations" jsonschema:"notable things you noticed"`
}

// Format is a structured-output format: a name and the JSON Schema the
// answer must match (sent as the OpenAI json_schema response format).
type Format struct {
	Name   string
	Schema json.RawMessage
	check  *jsonschema.Resolved
}

// The formats the engine asks for; derived from the Go types above, never
// written by hand, and only when a design first needs them: every pm
// command links this package, and deriving them costs more than the rest
// of a short command's start-up.
var (
	AngleResultFormat = sync.OnceValue(func() Format { return formatFor[AngleResult]("AngleResult", angleResultSchema) })
	PlanFormat        = sync.OnceValue(func() Format { return formatFor[Plan]("SupervisorPlan", planSchema) })
	WorkResultFormat  = sync.OnceValue(func() Format { return formatFor[WorkResult]("WorkerResult", workResultSchema) })
)

// SchemaOptions make lists plain arrays, for every JSON Schema pm derives
// from a Go type (these formats and ops.SchemaFor's tool arguments): the
// library's default for a Go slice is ["null","array"] (a nil slice
// marshals to null), which some model providers reject; pm reads a missing
// or null list as empty anyway.
var SchemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[[]string](): {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
}}

func formatFor[T any](name string, refine func(*jsonschema.Schema)) Format {
	s, err := jsonschema.For[T](SchemaOptions)
	if err != nil {
		panic(fmt.Sprintf("design: schema of %s: %v", name, err))
	}
	refine(s)
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("design: resolving the schema of %s: %v", name, err))
	}
	return Format{Name: name, Schema: data, check: rs}
}

func severityEnum() []any {
	out := make([]any, len(Severities))
	for i, s := range Severities {
		out[i] = string(s)
	}
	return out
}

func issueSchema(items *jsonschema.Schema) {
	if items == nil {
		return
	}
	items.Properties["severity"].Enum = severityEnum()
	one := 1.0
	items.Properties["location"].Properties["line"].Minimum = &one
}

func angleResultSchema(s *jsonschema.Schema) {
	issueSchema(s.Properties["issues_found"].Items)
	lo, hi := 0.0, 1.0
	s.Properties["confidence"].Minimum, s.Properties["confidence"].Maximum = &lo, &hi
	one := 1.0
	s.Properties["pass_number"].Minimum = &one
}

func planSchema(s *jsonschema.Schema) {
	s.Properties["type"].Enum = []any{string(RequestVerify), string(RequestRefine), string(RequestAnalyze), string(RequestToolCall)}
	issueSchema(s.Properties["issues"].Items)
}

func workResultSchema(s *jsonschema.Schema) {
	s.Properties["status"].Enum = []any{string(ResponseSuccess), string(ResponsePartial), string(ResponseError), string(ResponseNeedsInput)}
}

// ErrMalformed marks an answer that does not match its format; the engine
// asks again, a bounded number of times.
var ErrMalformed = errors.New("malformed structured output")

// decode checks text against f and reads it into v. A reply wrapped in a
// markdown code fence is unwrapped first (models do that even when asked
// for JSON). Every failure wraps ErrMalformed and says what was wrong.
func (f Format) decode(text string, v any) error {
	raw := []byte(unfence(text))
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return fmt.Errorf("%w: %s is not JSON: %v", ErrMalformed, f.Name, err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return fmt.Errorf("%w: %s must be a JSON object", ErrMalformed, f.Name)
	}
	if err := f.check.Validate(inst); err != nil {
		return fmt.Errorf("%w: %s does not match its schema: %v", ErrMalformed, f.Name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMalformed, f.Name, err)
	}
	return nil
}

func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") {
		return t
	}
	t = strings.TrimPrefix(t, "```")
	if nl := strings.IndexByte(t, '\n'); nl >= 0 {
		t = t[nl+1:]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), "```"))
}

// ParseAngleResult reads and validates an angle's reply for angle id in
// pass pass of a unit of lines lines: the schema (severities, confidence in
// [0,1], line ≥ 1, every field present), then what a schema cannot say: the
// angle and pass must be the ones asked about, each issue must describe
// something and lie within the unit. Issues get their Angle set.
func ParseAngleResult(text, angle string, pass, lines int) (AngleResult, error) {
	var r AngleResult
	if err := AngleResultFormat().decode(text, &r); err != nil {
		return AngleResult{}, err
	}
	if r.AngleID != angle {
		return AngleResult{}, fmt.Errorf("%w: angle_id is %q, the request was for %q", ErrMalformed, r.AngleID, angle)
	}
	if r.PassNumber != pass {
		return AngleResult{}, fmt.Errorf("%w: pass_number is %d, the request was for pass %d", ErrMalformed, r.PassNumber, pass)
	}
	for i := range r.IssuesFound {
		is := &r.IssuesFound[i]
		if strings.TrimSpace(is.Description) == "" {
			return AngleResult{}, fmt.Errorf("%w: issue %d has no description", ErrMalformed, i+1)
		}
		if lines > 0 && is.Location.Line > lines {
			return AngleResult{}, fmt.Errorf("%w: issue %d is at line %d of a %d-line unit", ErrMalformed, i+1, is.Location.Line, lines)
		}
		if c := is.Location.Column; c != nil && *c < 1 {
			return AngleResult{}, fmt.Errorf("%w: issue %d has column %d; columns start at 1", ErrMalformed, i+1, *c)
		}
		is.Angle = angle
	}
	if r.IssuesFound == nil {
		r.IssuesFound = []Issue{}
	}
	if r.Suggestions == nil {
		r.Suggestions = []string{}
	}
	return r, nil
}

// ParsePlan reads and validates the supervisor's plan.
func ParsePlan(text string) (Plan, error) {
	var p Plan
	if err := PlanFormat().decode(text, &p); err != nil {
		return Plan{}, err
	}
	switch {
	case p.Type == RequestRefine && len(p.Issues) == 0 && strings.TrimSpace(p.Context) == "":
		return Plan{}, fmt.Errorf("%w: a refine plan names the issues to fix or says what to do in context", ErrMalformed)
	case p.Type == RequestAnalyze && len(p.Questions) == 0:
		return Plan{}, fmt.Errorf("%w: an analyze plan asks at least one question", ErrMalformed)
	case p.Type == RequestToolCall && p.ToolName == "":
		return Plan{}, fmt.Errorf("%w: a tool_call plan names its tool_name", ErrMalformed)
	}
	return p, nil
}

// ParseWorkResult reads and validates the worker's answer to a request of
// type t: a successful refine returns code.
func ParseWorkResult(text string, t RequestType) (WorkResult, error) {
	var w WorkResult
	if err := WorkResultFormat().decode(text, &w); err != nil {
		return WorkResult{}, err
	}
	if t == RequestRefine && w.Status == ResponseSuccess && strings.TrimSpace(w.Code) == "" {
		return WorkResult{}, fmt.Errorf("%w: a successful refine returns the rewritten unit in code", ErrMalformed)
	}
	return w, nil
}
