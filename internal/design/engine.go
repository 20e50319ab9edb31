package design

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/crashpoint"
)

// Roles whose model usage a design reports.
const (
	RoleSupervisor = "supervisor"
	RoleWorker     = "worker"
	RoleTool       = "tool"
)

// DefaultMaxRetries is how many times a malformed structured answer is asked
// for again before the design ends in the error state.
const DefaultMaxRetries = 2

// historyLen is how many recent worker responses travel with a request.
const historyLen = 6

// Entry is one line of a design's log: a request, a response, a
// supervisor's plan or a state change. The journal also puts it on the bus.
type Entry struct {
	Kind     string             `json:"kind"` // request, response, plan, state
	Unit     int                `json:"unit,omitempty"`
	Pass     int                `json:"pass,omitempty"`
	Request  *SupervisorRequest `json:"request,omitempty"`
	Response *WorkerResponse    `json:"response,omitempty"`
	Plan     *Plan              `json:"plan,omitempty"`
	Metrics  *Metrics           `json:"metrics,omitempty"`
	Status   Status             `json:"status,omitempty"`
	Text     string             `json:"text,omitempty"`
}

// Entry kinds.
const (
	EntryRequest  = "request"
	EntryResponse = "response"
	EntryPlan     = "plan"
	EntryState    = "state"
)

// Journal persists a design: Save replaces its record (atomically: a crash
// leaves the old or the new one), Record appends one log line.
type Journal interface {
	Save(*State) error
	Record(Entry) error
}

// Tool is something a tool_call request may run (no model involved).
type Tool func(ctx context.Context, code string, args map[string]any) (string, error)

// Engine runs the loop of P005 over a State. Its fields are configuration;
// all progress lives in the State, saved after every step.
type Engine struct {
	Supervisor Model
	Worker     Model
	Angles     []Angle
	Journal    Journal
	Tools      map[string]Tool
	MaxRetries int // default DefaultMaxRetries; negative: none
	Now        func() time.Time
	NewID      func() string // request ids
}

// FailedError is a design that ended in the error state.
type FailedError struct{ Msg string }

func (e *FailedError) Error() string { return e.Msg }

// Run drives st until it is complete, saving after every step, or until ctx
// ends (st is then left processing, to be resumed by another Run). A design
// that ends in the error state returns *FailedError after it is saved
// complete.
func (e *Engine) Run(ctx context.Context, st *State) error {
	if st.Usage == nil {
		st.Usage = map[string]*Usage{}
	}
	st.Criteria = st.Criteria.withDefaults()
	if st.MaxPasses <= 0 {
		st.MaxPasses = DefaultMaxPasses
	}
	if st.Status == StatusInitializing {
		next := StatusProcessing
		if len(st.Units) == 0 || len(e.Angles) == 0 {
			next, st.Error = StatusError, "nothing to review: no units or no angles"
		}
		if err := e.moveAndSave(st, next); err != nil {
			return err
		}
	}
	for st.Status == StatusProcessing {
		if st.Cursor.Unit >= len(st.Units) {
			if err := e.moveAndSave(st, outcome(st.Units)); err != nil {
				return err
			}
			break
		}
		if err := e.step(ctx, st); err != nil {
			if ctx.Err() != nil {
				return err // interrupted: resumable where it stands
			}
			st.Error = err.Error()
			st.Units[st.Cursor.Unit].Status = StatusError
			if serr := e.moveAndSave(st, StatusError); serr != nil {
				return serr
			}
		}
	}
	if st.Status != StatusComplete {
		if err := e.moveAndSave(st, StatusComplete); err != nil {
			return err
		}
	}
	if st.Outcome == StatusError {
		return &FailedError{Msg: fmt.Sprintf("design %s ended in error: %s", st.ID, st.Error)}
	}
	return nil
}

// outcome is how the design ended: converged only if every unit did.
func outcome(units []Unit) Status {
	for _, u := range units {
		if u.Status == StatusMaxIterations {
			return StatusMaxIterations
		}
	}
	return StatusConverged
}

func (e *Engine) moveAndSave(st *State, to Status) error {
	if err := st.move(to); err != nil {
		return err
	}
	if err := e.save(st); err != nil {
		return err
	}
	return e.Journal.Record(Entry{Kind: EntryState, Status: to, Text: st.Error})
}

func (e *Engine) save(st *State) error {
	st.UpdatedAt = e.now()
	return e.Journal.Save(st)
}

// step runs one angle's review, or, once every angle ran, the supervisor's
// decision and the end of the pass.
func (e *Engine) step(ctx context.Context, st *State) error {
	c := &st.Cursor
	u := &st.Units[c.Unit]
	if c.Pass == 0 {
		c.Pass = 1
	}
	if u.Status == StatusInitializing || u.Status == "" {
		u.Status = StatusProcessing
	}
	if st.Current == nil {
		st.Current = &PassResult{PassNumber: c.Pass, AnglesRun: []AngleResult{}, Modifications: []Modification{}}
	}
	if c.Angle < len(e.Angles) {
		r, err := e.verify(ctx, st, u, e.Angles[c.Angle])
		if err != nil {
			return err
		}
		st.Current.AnglesRun = append(st.Current.AnglesRun, r)
		c.Angle++
		return e.save(st)
	}
	if err := e.decide(ctx, st, u); err != nil {
		return err
	}
	return e.endPass(st, u)
}

// endPass records the pass, tests convergence and moves the cursor on.
func (e *Engine) endPass(st *State, u *Unit) error {
	c, cur := &st.Cursor, st.Current
	for _, r := range cur.AnglesRun {
		cur.IssueCount += len(r.IssuesFound)
	}
	cur.Converged = st.Criteria.Converged(append(append([]PassResult(nil), u.PassHistory...), *cur))
	u.PassHistory = append(u.PassHistory, *cur)
	st.Current = nil
	switch {
	case cur.Converged:
		u.Status = StatusConverged
	case c.Pass >= st.MaxPasses:
		u.Status = StatusMaxIterations
	}
	if u.Status == StatusProcessing {
		c.Pass, c.Angle = c.Pass+1, 0
	} else {
		*c = Cursor{Unit: c.Unit + 1}
		st.History = nil
	}
	if err := e.save(st); err != nil {
		return err
	}
	crashpoint.Hit("design.pass")
	return nil
}

// verify asks the worker to review the unit from one angle.
func (e *Engine) verify(ctx context.Context, st *State, u *Unit, a Angle) (AngleResult, error) {
	req := e.request(st, u, RequestVerify)
	req.Context.AngleID = a.ID
	req.Payload = Payload{Code: numbered(u.CurrentContent), AngleID: a.ID, Criteria: a.Criteria}
	if err := e.Journal.Record(Entry{Kind: EntryRequest, Unit: u.Number, Pass: st.Cursor.Pass, Request: &req}); err != nil {
		return AngleResult{}, err
	}
	var r AngleResult
	m, err := e.ask(ctx, st, RoleWorker, e.Worker, a.System, verifyText(req, a), AngleResultFormat(), func(text string) error {
		var perr error
		r, perr = ParseAngleResult(text, a.ID, st.Cursor.Pass, lineCount(u.CurrentContent))
		return perr
	})
	if err != nil {
		return AngleResult{}, e.fail(st, u, req, m, err)
	}
	return r, e.respond(st, u, WorkerResponse{RequestID: req.RequestID, Status: ResponseSuccess, Result: mustJSON(r), Metrics: m})
}

// decide asks the supervisor for its plan and has the worker carry it out.
func (e *Engine) decide(ctx context.Context, st *State, u *Unit) error {
	var plan Plan
	m, err := e.ask(ctx, st, RoleSupervisor, e.Supervisor, SupervisorPrompt, planText(st, u, e.Angles, e.toolNames()), PlanFormat(), func(text string) error {
		var perr error
		plan, perr = ParsePlan(text)
		return perr
	})
	if err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	if err := e.Journal.Record(Entry{Kind: EntryPlan, Unit: u.Number, Pass: st.Cursor.Pass, Plan: &plan, Metrics: &m}); err != nil {
		return err
	}
	if plan.Type == RequestVerify {
		return nil // nothing to change; the next pass verifies again
	}
	req := e.request(st, u, plan.Type)
	req.Context.OriginalRequest = st.Goal + "\n\n" + plan.Context
	req.Constraints.MustPreserve = plan.Preserve
	switch plan.Type {
	case RequestRefine:
		req.Payload = Payload{Code: u.CurrentContent, Issues: plan.Issues, Preserve: plan.Preserve}
	case RequestAnalyze:
		req.Payload = Payload{Code: u.CurrentContent, Questions: plan.Questions}
	case RequestToolCall:
		req.Payload = Payload{ToolName: plan.ToolName, Arguments: mustJSON(plan.Arguments)}
	}
	if err := e.Journal.Record(Entry{Kind: EntryRequest, Unit: u.Number, Pass: st.Cursor.Pass, Request: &req}); err != nil {
		return err
	}
	if plan.Type == RequestToolCall {
		return e.runTool(ctx, st, u, req, plan)
	}
	return e.work(ctx, st, u, req, plan)
}

// work has the worker model refine or analyze the unit.
func (e *Engine) work(ctx context.Context, st *State, u *Unit, req SupervisorRequest, plan Plan) error {
	var w WorkResult
	m, err := e.ask(ctx, st, RoleWorker, e.Worker, WorkerPrompt, workText(req), WorkResultFormat(), func(text string) error {
		var perr error
		w, perr = ParseWorkResult(text, req.Type)
		return perr
	})
	if err != nil {
		return e.fail(st, u, req, m, err)
	}
	resp := WorkerResponse{RequestID: req.RequestID, Status: w.Status, Observations: w.Observations, Metrics: m}
	switch {
	case req.Type == RequestAnalyze:
		resp.Result = mustJSON(w.Answer)
	case w.Status == ResponseSuccess:
		if werr := e.modify(st, u, w, plan); werr != nil {
			resp.Status, resp.Error = ResponseError, werr
		} else {
			resp.Result = mustJSON(map[string]string{"code": u.CurrentContent, "reason": w.Reason})
		}
	default:
		resp.Result = mustJSON(w.Reason)
	}
	return e.respond(st, u, resp)
}

// MaxContent bounds a design's file, read or rewritten (ops.MaxDesignFile).
const MaxContent = 256 << 10

// modify applies a refined unit; a rewrite that would not compile as part
// of its Go file is refused (recoverable: the unit stays as it was).
func (e *Engine) modify(st *State, u *Unit, w WorkResult, plan Plan) *WorkerError {
	before := u.CurrentContent
	after := keepTrailing(before, w.Code)
	if after == before {
		return nil
	}
	// The model chooses the size of a rewrite: the file never grows past
	// what a design may read (every unit travels in every request).
	if grown := len(st.Content()) - len(before) + len(after); grown > MaxContent {
		return &WorkerError{Code: "too_large", Message: fmt.Sprintf("the rewritten unit makes the file %d bytes, over %d", grown, MaxContent), Recoverable: true}
	}
	if filepath.Ext(st.SourceFile) == ".go" {
		u.CurrentContent = after
		_, err := parser.ParseFile(token.NewFileSet(), "design.go", st.Content(), parser.SkipObjectResolution)
		u.CurrentContent = before
		if err != nil {
			return &WorkerError{Code: "does_not_parse", Message: "the rewritten unit does not parse as Go: " + err.Error(), Recoverable: true}
		}
	}
	angle := ""
	if len(plan.Issues) > 0 {
		angle = plan.Issues[0].Angle
	}
	u.CurrentContent = after
	u.IsModified = after != u.OriginalContent
	st.Current.Modifications = append(st.Current.Modifications, Modification{
		Pass: st.Cursor.Pass, Before: before, After: after, Reason: w.Reason, AngleID: angle,
	})
	return nil
}

// UnknownTool is the name recorded for a tool_call naming no tool: the
// name the model chose is its own text and never reaches the log, the bus or
// the report's Models table as if it were a model.
const UnknownTool = "tool:unknown"

// runTool runs a tool_call request; the "worker" here is the tool itself.
func (e *Engine) runTool(ctx context.Context, st *State, u *Unit, req SupervisorRequest, plan Plan) error {
	start := e.now()
	resp := WorkerResponse{RequestID: req.RequestID, Status: ResponseSuccess}
	name := UnknownTool
	tool, ok := e.Tools[plan.ToolName]
	if !ok {
		resp.Status = ResponseError
		resp.Error = &WorkerError{Code: "unknown_tool", Message: fmt.Sprintf("no tool %q; available: %s", plan.ToolName, strings.Join(e.toolNames(), ", ")), Recoverable: true}
	} else {
		name = "tool:" + plan.ToolName
		out, err := tool(ctx, st.Content(), plan.Arguments)
		resp.Result = mustJSON(out)
		if err != nil {
			resp.Status = ResponseError
			resp.Error = &WorkerError{Code: "tool_failed", Message: err.Error(), Recoverable: true}
		}
	}
	resp.Metrics = Metrics{Model: name, DurationMS: e.now().Sub(start).Milliseconds()}
	e.use(st, RoleTool, resp.Metrics)
	return e.respond(st, u, resp)
}

func (e *Engine) toolNames() []string {
	var out []string
	for n := range e.Tools {
		out = append(out, n)
	}
	return sortedCopy(out)
}

// ask asks model a question until parse accepts the answer, at most
// 1+MaxRetries times; each malformed answer is told what was wrong.
// Metrics add up every attempt.
func (e *Engine) ask(ctx context.Context, st *State, role string, model Model, system, user string, f Format, parse func(string) error) (Metrics, error) {
	m := Metrics{Model: model.Name()}
	retries := e.MaxRetries
	if retries == 0 {
		retries = DefaultMaxRetries
	}
	prompt := user
	var last error
	for attempt := 0; attempt <= max(retries, 0); attempt++ {
		start := e.now()
		text, tokens, err := model.Ask(ctx, system, prompt, f)
		d := e.now().Sub(start)
		m.TokensUsed += tokens
		m.DurationMS += d.Milliseconds()
		st.ActiveMS += d.Milliseconds()
		e.use(st, role, Metrics{Model: m.Model, TokensUsed: tokens, DurationMS: d.Milliseconds()})
		if err != nil {
			return m, err
		}
		if last = parse(text); last == nil {
			return m, nil
		}
		prompt = user + "\n\nYour previous answer was rejected: " + last.Error() +
			"\nAnswer again with only one JSON object matching the response schema."
	}
	return m, fmt.Errorf("%s answered %d times without valid structured output; last: %w", role, max(retries, 0)+1, last)
}

func (e *Engine) use(st *State, role string, m Metrics) {
	u := st.Usage[role]
	if u == nil {
		u = &Usage{Model: m.Model}
		st.Usage[role] = u
	}
	u.Calls++
	u.Tokens += m.TokensUsed
	u.DurationMS += m.DurationMS
}

// fail records the failed request's response and returns the error that
// ends the design.
func (e *Engine) fail(st *State, u *Unit, req SupervisorRequest, m Metrics, err error) error {
	code := "model_failed"
	if errors.Is(err, ErrMalformed) {
		code = "malformed_output"
	}
	resp := WorkerResponse{RequestID: req.RequestID, Status: ResponseError, Metrics: m,
		Error: &WorkerError{Code: code, Message: err.Error()}}
	if rerr := e.respond(st, u, resp); rerr != nil {
		return rerr
	}
	return fmt.Errorf("worker, %s request %s: %w", req.Type, req.RequestID, err)
}

func (e *Engine) respond(st *State, u *Unit, resp WorkerResponse) error {
	st.History = append(st.History, resp)
	if len(st.History) > historyLen {
		st.History = st.History[len(st.History)-historyLen:]
	}
	return e.Journal.Record(Entry{Kind: EntryResponse, Unit: u.Number, Pass: st.Cursor.Pass, Response: &resp})
}

func (e *Engine) request(st *State, u *Unit, t RequestType) SupervisorRequest {
	return SupervisorRequest{
		RequestID: e.NewID(), Type: t, Unit: u.Number,
		Context: RequestContext{
			OriginalRequest: st.Goal, CurrentCode: u.CurrentContent, PassNumber: st.Cursor.Pass,
			History: append([]WorkerResponse(nil), st.History...),
		},
	}
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // the engine's own types always marshal
	}
	return data
}

// keepTrailing gives a rewritten unit the trailing newlines of the one it
// replaces, so units still join into a well-formed file.
func keepTrailing(before, after string) string {
	trail := before[len(strings.TrimRight(before, "\n")):]
	return strings.TrimRight(after, "\n") + trail
}

func lineCount(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// numbered prefixes each line with its 1-based number, so issues can point.
func numbered(code string) string {
	lines := strings.Split(strings.TrimRight(code, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%4d| %s\n", i+1, l)
	}
	return b.String()
}
