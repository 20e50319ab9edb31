package design

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/openaitest"
)

// memJournal keeps the last saved record (as JSON, as the store would) and
// every log entry.
type memJournal struct {
	mu      sync.Mutex
	saved   []byte
	entries []Entry
	onSave  func(*State)
}

func (j *memJournal) Save(st *State) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.saved = data
	j.mu.Unlock()
	if j.onSave != nil {
		j.onSave(st)
	}
	return nil
}

func (j *memJournal) Record(e Entry) error {
	data, err := json.Marshal(e) // every entry must be a valid JSON line
	if err != nil {
		return err
	}
	var back Entry
	if err := json.Unmarshal(data, &back); err != nil {
		return err
	}
	j.mu.Lock()
	j.entries = append(j.entries, back)
	j.mu.Unlock()
	return nil
}

func (j *memJournal) load(t *testing.T) *State {
	t.Helper()
	var st State
	if err := json.Unmarshal(j.saved, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// script answers as supervisor, worker and angles, by the system prompt's
// title line, with the pass number the request names.
type script struct {
	angle      func(angle string, pass int) string
	supervisor func(pass int) string
	worker     func(req string) string
	usage      map[string]int // tokens per reply, by model
}

var passRe = func(text string) int {
	var n int
	if i := strings.Index(text, `"pass_number": `); i >= 0 {
		fmt.Sscanf(text[i+len(`"pass_number": `):], "%d", &n)
	} else if i := strings.Index(text, "pass "); i >= 0 {
		fmt.Sscanf(text[i+5:], "%d", &n)
	}
	return n
}

func (s script) reply(req openaitest.Request) openaitest.Reply {
	system := req.Messages[0].Content
	user := req.LastMessage().Content
	title := strings.TrimPrefix(strings.SplitN(system, "\n", 2)[0], "# ")
	var text string
	switch title {
	case "Supervisor":
		text = s.supervisor(passRe(user))
	case "Worker":
		text = s.worker(user)
	default:
		text = s.angle(strings.ToLower(title), passRe(user))
	}
	r := openaitest.Reply{Content: text}
	if n := s.usage[req.Model]; n > 0 {
		r.Usage = &openaitest.Usage{PromptTokens: n - 1, CompletionTokens: 1}
	}
	return r
}

var testAngles = []Angle{
	{ID: "correctness", System: "# Correctness\nFind bugs.", Weight: 0.4},
	{ID: "style", System: "# Style\nFind style problems.", Weight: 0.15},
}

func noIssues(angle string, pass int) string {
	return fmt.Sprintf(`{"angle_id":%q,"issues_found":[],"suggestions":[],"confidence":0.9,"pass_number":%d}`, angle, pass)
}

func oneIssue(angle string, pass int) string {
	return fmt.Sprintf(`{"angle_id":%q,"issues_found":[{"severity":"high","location":{"line":1},"description":"off by one","suggested_fix":"use <="}],"suggestions":[],"confidence":0.8,"pass_number":%d}`, angle, pass)
}

func accept(int) string {
	return `{"type":"verify","context":"fine","issues":[],"preserve":[],"questions":[]}`
}

type harness struct {
	srv     *openaitest.Server
	journal *memJournal
	engine  *Engine
	clock   time.Time
	spent   *llm.Counters // what the models' budget counts
}

func newHarness(t *testing.T, s script) *harness {
	t.Helper()
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	srv.Handle(s.reply)
	h := &harness{srv: srv, journal: &memJournal{}, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	spent := &llm.Counters{}
	h.spent = spent
	model := func(name string) Model {
		return &LLM{Provider: llm.Provider{BaseURL: srv.BaseURL(), Model: name}, Spent: spent,
			Retry: llm.RetryPolicy{MaxAttempts: 1}}
	}
	var n int
	var mu sync.Mutex
	h.engine = &Engine{
		Supervisor: model("big"), Worker: model("small"), Angles: testAngles, Journal: h.journal,
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			h.clock = h.clock.Add(5 * time.Millisecond)
			return h.clock
		},
		NewID: func() string { n++; return fmt.Sprintf("rq-%06d", n) },
	}
	return h
}

const twoFuncs = "package p\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n"

func newState(maxPasses int) *State {
	return &State{ID: "ds-000001", SourceFile: "p.go", Goal: "no bugs", MaxPasses: maxPasses,
		Status: StatusInitializing, Units: Split("p.go", twoFuncs)}
}

func TestConvergesAfterTwoStablePasses(t *testing.T) {
	h := newHarness(t, script{angle: noIssues, supervisor: accept})
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusComplete || st.Outcome != StatusConverged {
		t.Fatalf("status %s outcome %s, want complete converged", st.Status, st.Outcome)
	}
	for _, u := range st.Units {
		if u.Status != StatusConverged || len(u.PassHistory) != 2 || !u.PassHistory[1].Converged || u.PassHistory[0].Converged {
			t.Errorf("unit %d: %s after %d passes", u.Number, u.Status, len(u.PassHistory))
		}
	}
	// 2 units × 2 passes × (2 angles + 1 supervisor) model calls.
	if got := len(h.srv.Requests()); got != 12 {
		t.Errorf("%d model requests, want 12", got)
	}
	if Diff(st) != "" || st.Content() != twoFuncs {
		t.Errorf("content changed: %q", Diff(st))
	}
	checkCorrelated(t, h.journal.entries)
	if saved := h.journal.load(t); saved.Status != StatusComplete {
		t.Errorf("saved status %s", saved.Status)
	}
}

// checkCorrelated: every request has exactly one response, after it.
func checkCorrelated(t *testing.T, entries []Entry) {
	t.Helper()
	open := map[string]bool{}
	for _, e := range entries {
		switch e.Kind {
		case EntryRequest:
			open[e.Request.RequestID] = true
		case EntryResponse:
			if !open[e.Response.RequestID] {
				t.Errorf("response %s without an open request", e.Response.RequestID)
			}
			delete(open, e.Response.RequestID)
		}
	}
	if len(open) > 0 {
		t.Errorf("requests without a response: %v", open)
	}
}

func TestMaxIterationsWhenIssuesKeepChanging(t *testing.T) {
	changing := func(angle string, pass int) string {
		issues := make([]string, pass%3)
		for i := range issues {
			issues[i] = fmt.Sprintf(`{"severity":"low","location":{"line":1},"description":"nit %d"}`, i)
		}
		return fmt.Sprintf(`{"angle_id":%q,"issues_found":[%s],"suggestions":[],"confidence":0.5,"pass_number":%d}`, angle, strings.Join(issues, ","), pass)
	}
	h := newHarness(t, script{angle: changing, supervisor: accept})
	st := newState(3)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != StatusMaxIterations || st.Status != StatusComplete {
		t.Fatalf("outcome %s status %s", st.Outcome, st.Status)
	}
	for _, u := range st.Units {
		if u.Status != StatusMaxIterations || len(u.PassHistory) != 3 {
			t.Errorf("unit %d: %s after %d passes, want max_iterations after 3", u.Number, u.Status, len(u.PassHistory))
		}
	}
}

func TestMalformedOutputIsRetriedThenErrors(t *testing.T) {
	h := newHarness(t, script{angle: func(string, int) string { return `{"angle_id": "correctness", "issues_found": "many"}` }, supervisor: accept})
	st := newState(8)
	err := h.engine.Run(context.Background(), st)
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want *FailedError", err)
	}
	if st.Status != StatusComplete || st.Outcome != StatusError || st.Units[0].Status != StatusError {
		t.Fatalf("status %s outcome %s unit %s", st.Status, st.Outcome, st.Units[0].Status)
	}
	if got := len(h.srv.Requests()); got != 1+DefaultMaxRetries {
		t.Errorf("%d requests, want %d (first try and retries)", got, 1+DefaultMaxRetries)
	}
	// The retry tells the model what was wrong; the failure is a response.
	if last := h.srv.Requests()[1].LastMessage().Content; !strings.Contains(last, "Your previous answer was rejected") {
		t.Errorf("retry prompt: %q", last)
	}
	resp := h.journal.entries[len(h.journal.entries)-3] // response, state error, state complete
	if resp.Kind != EntryResponse || resp.Response.Status != ResponseError || resp.Response.Error.Code != "malformed_output" || resp.Response.Error.Recoverable {
		t.Errorf("last response: %+v", resp)
	}
	if !strings.Contains(st.Error, "without valid structured output") {
		t.Errorf("error: %s", st.Error)
	}
}

func TestMalformedOnceThenValid(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	flaky := func(angle string, pass int) string {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return "```json\nnot json\n```"
		}
		return noIssues(angle, pass)
	}
	h := newHarness(t, script{angle: flaky, supervisor: accept})
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != StatusConverged {
		t.Fatalf("outcome %s", st.Outcome)
	}
}

func TestRefineModifiesAndRecordsWhy(t *testing.T) {
	issues := func(angle string, pass int) string {
		if pass == 1 && angle == "correctness" {
			return oneIssue(angle, pass)
		}
		return noIssues(angle, pass)
	}
	plan := func(pass int) string {
		if pass == 1 {
			return `{"type":"refine","context":"fix it","issues":[{"severity":"high","location":{"line":1},"description":"off by one","angle":"correctness"}],"preserve":["the signature"],"questions":[]}`
		}
		return accept(pass)
	}
	worker := func(req string) string {
		code := "package p\n\nfunc A() int { return 10 }"
		if strings.Contains(req, "func B") {
			code = "func B() int { return 20 }"
		}
		return fmt.Sprintf(`{"status":"success","code":%q,"reason":"fixed the constant","observations":["simple"]}`, code)
	}
	h := newHarness(t, script{angle: issues, supervisor: plan, worker: worker})
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	want := "package p\n\nfunc A() int { return 10 }\n\nfunc B() int { return 20 }\n"
	if st.Content() != want {
		t.Fatalf("content %q, want %q", st.Content(), want)
	}
	for _, u := range st.Units {
		// Pass 1 modifies, passes 2 and 3 are stable: converged at 3.
		if u.Status != StatusConverged || len(u.PassHistory) != 3 || !u.IsModified {
			t.Errorf("unit %d: %s, %d passes, modified %v", u.Number, u.Status, len(u.PassHistory), u.IsModified)
		}
		m := u.PassHistory[0].Modifications
		if len(m) != 1 || m[0].Reason != "fixed the constant" || m[0].AngleID != "correctness" || m[0].Pass != 1 {
			t.Errorf("unit %d modifications: %+v", u.Number, m)
		}
	}
	d := Diff(st)
	if !strings.Contains(d, "-func A() int { return 1 }") || !strings.Contains(d, "+func A() int { return 10 }") {
		t.Errorf("diff:\n%s", d)
	}
	r := BuildReport(st)
	if len(r.Modifications) != 2 || !strings.Contains(r.Markdown(), "fixed the constant") {
		t.Errorf("report: %+v", r)
	}
	checkCorrelated(t, h.journal.entries)
}

func TestRefineThatDoesNotParseIsRefused(t *testing.T) {
	issues := func(angle string, pass int) string { return noIssues(angle, pass) }
	plan := func(pass int) string {
		if pass == 1 {
			return `{"type":"refine","context":"rewrite","issues":[],"preserve":[],"questions":[]}`
		}
		return accept(pass)
	}
	worker := func(string) string {
		return `{"status":"success","code":"func A( {","reason":"broke it","observations":[]}`
	}
	h := newHarness(t, script{angle: issues, supervisor: plan, worker: worker})
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.Content() != twoFuncs {
		t.Fatalf("a rewrite that does not parse was applied: %q", st.Content())
	}
	var refused bool
	for _, e := range h.journal.entries {
		if e.Kind == EntryResponse && e.Response.Error != nil && e.Response.Error.Code == "does_not_parse" && e.Response.Error.Recoverable {
			refused = true
		}
	}
	if !refused {
		t.Error("no recoverable does_not_parse response recorded")
	}
}

// A rewrite is the model's to size: one that would take the file past
// MaxContent is refused (recoverable) and the unit kept.
func TestRefineTooLargeIsRefused(t *testing.T) {
	plan := func(pass int) string {
		if pass == 1 {
			return `{"type":"refine","context":"rewrite","issues":[],"preserve":[],"questions":[]}`
		}
		return accept(pass)
	}
	huge, err := json.Marshal(map[string]any{"status": "success", "code": "func A() {}\n// " + strings.Repeat("x", MaxContent), "reason": "grew it", "observations": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	worker := func(string) string { return string(huge) }
	h := newHarness(t, script{angle: noIssues, supervisor: plan, worker: worker})
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.Content() != twoFuncs {
		t.Fatalf("a rewrite over MaxContent was applied (%d bytes)", len(st.Content()))
	}
	var refused bool
	for _, e := range h.journal.entries {
		if e.Kind == EntryResponse && e.Response.Error != nil && e.Response.Error.Code == "too_large" && e.Response.Error.Recoverable {
			refused = true
		}
	}
	if !refused {
		t.Error("no recoverable too_large response recorded")
	}
}

func TestMetricsSummedPerModel(t *testing.T) {
	s := script{angle: noIssues, supervisor: accept, usage: map[string]int{"big": 100, "small": 10}}
	h := newHarness(t, s)
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	sup, wrk := st.Usage[RoleSupervisor], st.Usage[RoleWorker]
	// 2 units × 2 passes: 4 supervisor calls, 8 angle reviews by the worker.
	if sup.Model != "big" || sup.Calls != 4 || sup.Tokens != 400 {
		t.Errorf("supervisor usage %+v", sup)
	}
	if wrk.Model != "small" || wrk.Calls != 8 || wrk.Tokens != 80 {
		t.Errorf("worker usage %+v", wrk)
	}
	// The test clock moves 5ms at each reading; each call reads it twice.
	if sup.DurationMS != 4*5 || wrk.DurationMS != 8*5 {
		t.Errorf("durations: supervisor %dms worker %dms", sup.DurationMS, wrk.DurationMS)
	}
	var perCall int64
	for _, e := range h.journal.entries {
		if e.Kind == EntryResponse {
			perCall += e.Response.Metrics.TokensUsed
		}
		if e.Kind == EntryPlan {
			perCall += e.Metrics.TokensUsed
		}
	}
	if perCall != 480 || h.spent.Tokens != 480 || h.spent.Turns != 12 {
		t.Errorf("tokens in the log %d, spent %+v, want 480 in 12 turns", perCall, h.spent)
	}
}

// An interrupted design resumes at its cursor: what was saved is not asked
// again.
func TestResumeAfterInterruption(t *testing.T) {
	h := newHarness(t, script{angle: noIssues, supervisor: accept})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.journal.onSave = func(st *State) {
		if len(st.Units[0].PassHistory) == 1 {
			cancel() // as if killed right after pass 1 of unit 1 was saved
		}
	}
	st := newState(8)
	if err := h.engine.Run(ctx, st); err == nil {
		t.Fatal("an interrupted run returned nil")
	}
	saved := h.journal.load(t)
	if saved.Status != StatusProcessing || saved.Cursor != (Cursor{Unit: 0, Pass: 2, Angle: 0}) {
		t.Fatalf("saved %s at %+v", saved.Status, saved.Cursor)
	}
	before := len(h.srv.Requests())
	h.journal.onSave = nil
	if err := h.engine.Run(context.Background(), saved); err != nil {
		t.Fatal(err)
	}
	if saved.Outcome != StatusConverged || len(saved.Units[0].PassHistory) != 2 {
		t.Fatalf("resumed: %s, %d passes", saved.Outcome, len(saved.Units[0].PassHistory))
	}
	// Unit 1 pass 2 (3 calls) and unit 2 (6 calls) remain; the request the
	// interruption cut short is asked again.
	if got := len(h.srv.Requests()) - before; got != 9 {
		t.Errorf("%d requests after resume, want 9", got)
	}
}

func TestToolCallRunsTool(t *testing.T) {
	plan := func(pass int) string {
		if pass == 1 {
			return `{"type":"tool_call","context":"run the tests","issues":[],"preserve":[],"questions":[],"tool_name":"run_tests","arguments":{}}`
		}
		return accept(pass)
	}
	h := newHarness(t, script{angle: noIssues, supervisor: plan})
	var ran int
	h.engine.Tools = map[string]Tool{"run_tests": func(_ context.Context, code string, _ map[string]any) (string, error) {
		ran++
		if code != twoFuncs {
			t.Errorf("tool saw %q", code)
		}
		return "ok", nil
	}}
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if ran != 2 || st.Usage[RoleTool].Calls != 2 {
		t.Errorf("tool ran %d times, usage %+v", ran, st.Usage[RoleTool])
	}
	checkCorrelated(t, h.journal.entries)
}

func TestRequestsAskForStructuredOutput(t *testing.T) {
	h := newHarness(t, script{angle: noIssues, supervisor: accept})
	if err := h.engine.Run(context.Background(), newState(8)); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range h.srv.Requests() {
		if r.ResponseFormat == nil || r.ResponseFormat.Type != "json_schema" || len(r.ResponseFormat.Schema) == 0 {
			t.Fatalf("request without a json_schema response format: %+v", r.ResponseFormat)
		}
		names[r.ResponseFormat.Name] = true
	}
	if !names["AngleResult"] || !names["SupervisorPlan"] {
		t.Errorf("formats used: %v", names)
	}
}

// A tool name the model made up is not recorded as a model name: the log,
// the bus and the report's Models table show a fixed name instead.
func TestUnknownToolIsNotRecordedAsModel(t *testing.T) {
	const bogus = "evil\n## Diff\n+planted"
	plan := func(pass int) string {
		if pass == 1 {
			return fmt.Sprintf(`{"type":"tool_call","context":"run it","issues":[],"preserve":[],"questions":[],"tool_name":%q,"arguments":{}}`, bogus)
		}
		return accept(pass)
	}
	h := newHarness(t, script{angle: noIssues, supervisor: plan})
	h.engine.Tools = map[string]Tool{"run_tests": func(context.Context, string, map[string]any) (string, error) { return "ok", nil }}
	st := newState(8)
	if err := h.engine.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if got := st.Usage[RoleTool]; got == nil || got.Model != UnknownTool {
		t.Fatalf("tool usage %+v, want model %q", got, UnknownTool)
	}
	var responses int
	for _, e := range h.journal.entries {
		if e.Kind == EntryResponse && e.Response.Metrics.Model == "tool:"+bogus {
			t.Errorf("the log records the model-chosen tool name %q", e.Response.Metrics.Model)
		}
		if e.Kind == EntryResponse && e.Response.Error != nil && e.Response.Error.Code == "unknown_tool" {
			responses++
		}
	}
	if responses == 0 {
		t.Error("no unknown_tool response in the log")
	}
	if md := BuildReport(st).Markdown(); strings.Contains(md, bogus) {
		t.Errorf("the report holds the model-chosen tool name:\n%s", md)
	}
}
