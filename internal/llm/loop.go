package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/loopguard"
	"github.com/plasmodium/pm/internal/secret"
)

// Tool is a function the model may call. Parameters is its JSON Schema (an
// empty object schema when nil). Call receives the raw JSON arguments; its
// error becomes the tool result "error: ..." rather than stopping the loop.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Call        func(ctx context.Context, args json.RawMessage) (string, error)
}

// Defaults for the Loop's zero fields.
const (
	DefaultCallTimeout = 5 * time.Minute
	DefaultToolTimeout = 10 * time.Minute
	// MaxToolResult bounds one tool result in bytes; a longer one is cut (at
	// a UTF-8 boundary) with a note, so it fits the context and a JSONL line.
	MaxToolResult = 64 << 10
)

// emptyAnswer is recorded for an answer with neither text nor tool calls.
const emptyAnswer = "(empty response)"

// EventKind names what an Event reports.
type EventKind string

const (
	EventTurn       EventKind = "turn"        // a model call starts; Turn is its number
	EventRetry      EventKind = "retry"       // an attempt failed; Attempt, Delay, Status, Text (the error)
	EventResponse   EventKind = "response"    // a response arrived; Finish, Tokens, Calls
	EventToolCall   EventKind = "tool_call"   // a tool call starts; Tool, CallID, Args
	EventToolResult EventKind = "tool_result" // a tool call ended; Tool, CallID, Text, IsError
	EventRepair     EventKind = "repair"      // the loaded transcript was repaired after a crash; Text
	EventBudget     EventKind = "budget"      // a budget stopped the loop; Text
	EventRepeat     EventKind = "repeat"      // the loop breaker held a repeated call (Repeats); Tool, CallID, Args, Text (what happened to it)
	EventCut        EventKind = "cut"         // the history was cut as its transcript was (HistoryBytes); Text (the mark of what was dropped)
	// Code-designer mode (Loop.DocPreview; docpreview.go).
	EventDocPreview  EventKind = "doc_preview"  // a call held back with its doc's preview; Tool, CallID, Args, Text (the preview)
	EventDocDecision EventKind = "doc_decision" // the model's decision on a previewed call; Tool, CallID, Args, Text (confirmed, revised, dropped)
)

// Event is one observable step of a Loop. All text is masked.
type Event struct {
	Kind    EventKind
	Turn    int64
	Tool    string
	CallID  string
	Args    string
	Text    string
	IsError bool
	Attempt int
	Delay   time.Duration
	Status  int
	Finish  string
	Tokens  int64 // tokens of this response
	Usage   Usage // this response's tokens, split (EventResponse)
	Calls   int   // tool calls this response asks for
	Used    Counters
}

// Usage is one response's tokens as the endpoint reported them: the prompt
// (Cached of it read from the provider's cache: OpenAI's
// prompt_tokens_details.cached_tokens) and the completion. Estimated is
// set when the endpoint reported none and the counts are the four-characters
// estimate: good enough for a token budget, not for a bill.
type Usage struct {
	Prompt     int64
	Cached     int64
	Completion int64
	Estimated  bool
}

// Loop is the model loop of one agent. Configure its fields, then call Run;
// Run calls are serialized. See the package documentation for invariants.
type Loop struct {
	Provider   Provider
	Tools      []Tool
	System     string     // sent first on every request, never stored in the transcript
	Transcript Transcript // nil: in memory only
	// HistoryBytes is the bound the Transcript is kept to (the state's
	// limits.transcript_bytes; 0: none). Past it the history is cut as the
	// transcript was, by reading it back (history.go).
	HistoryBytes int64
	Budget       Budget
	Used         Counters   // spent so far; may be seeded by a respawning host
	Started      time.Time  // start of the wall-time budget; zero: set by the first Run
	Secrets      secret.Set // masked like Provider.APIKey
	// ResponseFormat, when set, asks for structured output (a JSON Schema
	// response format): the code designer's angles, supervisor and worker.
	ResponseFormat *openai.ChatCompletionResponseFormat

	OnDelta func(text string) // streamed assistant text, as it arrives
	OnEvent func(Event)
	// Before, when set, is asked before each model call, after Budget: an
	// error stops the loop without making the call (a *BudgetError is
	// reported as EventBudget). The host checks what the loop cannot see
	// here: a task's shared budget, dollars, a project's window. It may
	// block (to ask the human).
	Before func(ctx context.Context, used Counters) error

	// Repeats, when set, is the loop breaker for tool calls (loopguard): a
	// call that would be its Limit-th in a row with the same arguments and
	// the same result is held, and OnRepeat decides (repeat.go).
	Repeats *loopguard.Guard
	// OnRepeat is asked about a held call: "" runs it (and the count starts
	// again), any other text is its tool result instead and the model goes
	// on; an error stops the loop (the calls of that response are answered
	// with it). nil: a hit stops the loop with a *RepeatError.
	OnRepeat func(ctx context.Context, h loopguard.Hit) (refusal string, err error)

	// DocPreview turns code-designer mode's doc preview on (nil: off, and
	// the loop is exactly as without it): it returns the first lines of a
	// tool's documentation, shown to the model before the call runs (the
	// protocol is in docpreview.go). It is called once per previewed call.
	DocPreview func(tool string) string

	CallTimeout time.Duration // each model call attempt (default DefaultCallTimeout)
	// MaxResponseTokens caps each response, sent as max_tokens (0: not
	// sent, the provider's cap).
	MaxResponseTokens int
	ToolTimeout       time.Duration // each tool call (default DefaultToolTimeout)
	Retry             RetryPolicy

	// Sleep and Now are seams for tests (defaults: a context-aware timer, time.Now).
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time

	run     sync.Mutex // held by Run
	cb      sync.Mutex // serializes OnDelta and OnEvent
	client  *openai.Client
	history []openai.ChatCompletionMessage
	size    int64             // the history's size as its transcript counts it (history.go; with HistoryBytes only)
	cutAt   int64             // the size to reach before the history is read back again (0: its bound)
	pending []openai.ToolCall // calls previewed and not yet decided on (DocPreview)
}

// Run appends userMessage (none when empty: continue the loaded transcript)
// and drives the model until it answers without tool calls, returning that
// answer. It stops early, with the history and transcript left valid, on a
// budget (*BudgetError), a non-retryable or exhausted model error, a
// transcript write error (or read-back: HistoryBytes), or ctx.
func (l *Loop) Run(ctx context.Context, userMessage string) (final string, err error) {
	l.run.Lock()
	defer l.run.Unlock()
	if l.Transcript == nil {
		l.Transcript = &MemTranscript{}
	}
	if l.Started.IsZero() {
		l.Started = l.now()
	}
	if l.client == nil {
		l.client = l.Provider.client()
	}
	if err := l.load(); err != nil {
		return "", l.mask(fmt.Errorf("llm: loading transcript: %w", err))
	}
	if userMessage != "" {
		if err := l.append(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: userMessage}); err != nil {
			return "", err
		}
	} else if len(l.history) == 0 {
		return "", errors.New("llm: nothing to do: no user message and an empty transcript")
	}

	runCtx := ctx
	if l.Budget.MaxWall > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, l.Budget.MaxWall-l.elapsed())
		defer cancel()
	}
	// wallStop turns a cancellation caused by the wall-time budget into its
	// BudgetError.
	wallStop := func(err error) error {
		if runCtx.Err() != nil && ctx.Err() == nil {
			be := &BudgetError{What: BudgetWall, Limit: int64(l.Budget.MaxWall), Used: int64(max(l.elapsed(), l.Budget.MaxWall))}
			l.emit(Event{Kind: EventBudget, Text: be.Error(), Used: l.Used})
			return be
		}
		return err
	}

	for {
		if be := l.Budget.check(l.Used, l.elapsed()); be != nil {
			l.emit(Event{Kind: EventBudget, Text: be.Error(), Used: l.Used})
			return "", be
		}
		if err := l.before(runCtx); err != nil {
			return "", wallStop(err)
		}
		msg, usage, finish, err := l.complete(runCtx)
		if err != nil {
			return "", wallStop(l.mask(err))
		}
		tokens := usage.Prompt + usage.Completion
		l.Used.Turns++
		l.Used.Tokens += tokens
		answer := msg.Content
		if answer == "" && len(msg.ToolCalls) == 0 {
			// The API refuses an assistant message with neither content nor
			// tool calls in a later request; keep the transcript resumable.
			msg.Content = emptyAnswer
		}
		if err := l.append(msg); err != nil {
			return "", err
		}
		l.emit(Event{Kind: EventResponse, Turn: l.Used.Turns, Finish: finish, Tokens: tokens, Usage: usage, Calls: len(msg.ToolCalls), Used: l.Used})
		if len(msg.ToolCalls) == 0 {
			l.decide(nil) // an answer drops what was previewed
			return l.secrets().Mask(answer), nil
		}
		if be := l.Budget.checkResponse(l.Used, len(msg.ToolCalls), l.elapsed()); be != nil {
			results := make([]string, len(msg.ToolCalls))
			for i := range results {
				results[i] = "error: not run: " + be.Error()
			}
			if err := l.appendResults(msg.ToolCalls, results); err != nil {
				return "", err
			}
			l.emit(Event{Kind: EventBudget, Text: be.Error(), Used: l.Used})
			return "", be
		}
		if l.needsPreview(msg.ToolCalls) {
			if err := l.preview(msg.ToolCalls); err != nil {
				return "", err
			}
			continue
		}
		decisions := l.decide(msg.ToolCalls)
		held, err := l.holdRepeats(runCtx, msg.ToolCalls)
		if err != nil {
			return "", wallStop(err)
		}
		results := l.runTools(runCtx, msg.ToolCalls, held)
		noteDecisions(results, decisions)
		l.Used.ToolCalls += int64(len(msg.ToolCalls))
		if err := l.appendResults(msg.ToolCalls, results); err != nil {
			return "", err
		}
		if runCtx.Err() != nil {
			return "", wallStop(runCtx.Err())
		}
	}
}

// before asks Loop.Before; a budget it reports is an EventBudget.
func (l *Loop) before(ctx context.Context) error {
	if l.Before == nil {
		return nil
	}
	err := l.Before(ctx, l.Used)
	var be *BudgetError
	if errors.As(err, &be) {
		l.emit(Event{Kind: EventBudget, Text: be.Error(), Used: l.Used})
	}
	if err != nil {
		return l.mask(err)
	}
	return nil
}

// History returns a copy of the conversation the loop holds (without the
// system prompt): as of the last Run, and, with HistoryBytes, after a cut
// what its transcript keeps.
func (l *Loop) History() []openai.ChatCompletionMessage {
	l.run.Lock()
	defer l.run.Unlock()
	return append([]openai.ChatCompletionMessage(nil), l.history...)
}

// load reads the transcript and repairs what a crash left unanswered.
func (l *Loop) load() error {
	msgs, err := l.Transcript.Load()
	if err != nil {
		return err
	}
	fixed, tail, changed := repair(msgs)
	if len(tail) > 0 {
		if err := l.Transcript.Append(tail...); err != nil {
			return err
		}
	}
	if changed {
		l.emit(Event{Kind: EventRepair, Text: fmt.Sprintf("transcript of %d messages repaired to %d: unanswered tool calls marked interrupted", len(msgs), len(fixed))})
	}
	l.setHistory(fixed)
	l.pending = nil
	if l.DocPreview != nil {
		l.pending = pendingFromHistory(fixed)
	}
	return nil
}

// append masks msgs, records them in the transcript, then in the history,
// which it keeps to HistoryBytes as the transcript is kept (history.go).
func (l *Loop) append(msgs ...openai.ChatCompletionMessage) error {
	for i := range msgs {
		msgs[i] = maskMessage(msgs[i], l.secrets())
	}
	if err := l.Transcript.Append(msgs...); err != nil {
		return l.mask(fmt.Errorf("llm: writing transcript: %w", err))
	}
	l.history = append(l.history, msgs...)
	l.counted(msgs)
	return l.keepBound()
}

// appendResults records one tool message per call, in call order.
func (l *Loop) appendResults(calls []openai.ToolCall, results []string) error {
	msgs := make([]openai.ChatCompletionMessage, len(calls))
	for i, tc := range calls {
		msgs[i] = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: results[i]}
	}
	return l.append(msgs...)
}

// complete makes one model call with retries: each attempt under
// CallTimeout, waits per RetryPolicy, events for each retry.
func (l *Loop) complete(ctx context.Context) (msg openai.ChatCompletionMessage, usage Usage, finish string, err error) {
	req := l.request()
	policy := l.Retry.withDefaults()
	turn := l.Used.Turns + 1
	l.emit(Event{Kind: EventTurn, Turn: turn, Used: l.Used})
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, l.callTimeout())
		callCtx, info := withRespInfo(callCtx)
		msg, usage, finish, err = l.stream(callCtx, req, turn)
		timedOut := callCtx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil {
			return msg, usage, finish, nil
		}
		if timedOut {
			err = fmt.Errorf("model call timed out after %s: %w", l.callTimeout(), err)
		}
		if !retryable(ctx, err) || attempt >= policy.MaxAttempts {
			return msg, Usage{}, "", fmt.Errorf("llm: %s: model call failed after %d attempt(s): %w", l.Provider, attempt, err)
		}
		d := policy.backoff(attempt, info)
		l.emit(Event{Kind: EventRetry, Turn: turn, Attempt: attempt, Delay: d, Status: statusOf(err), Text: l.secrets().Mask(err.Error())})
		if serr := l.sleep(ctx, d); serr != nil {
			return msg, Usage{}, "", fmt.Errorf("llm: waiting to retry the model call: %w (last error: %v)", serr, err)
		}
	}
}

func (l *Loop) request() openai.ChatCompletionRequest {
	msgs := make([]openai.ChatCompletionMessage, 0, len(l.history)+1)
	if l.System != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: l.secrets().Mask(l.System)})
	}
	msgs = append(msgs, l.history...)
	req := openai.ChatCompletionRequest{
		Model:          l.Provider.Model,
		Messages:       msgs,
		Stream:         true,
		StreamOptions:  &openai.StreamOptions{IncludeUsage: true},
		ResponseFormat: l.ResponseFormat,
		//lint:ignore SA1019 max_tokens is what OpenAI-protocol servers other than OpenAI's (ollama, vLLM, llama.cpp) read
		MaxTokens: l.MaxResponseTokens,
	}
	req.Tools = ToolDefs(l.Tools)
	return req
}

// ToolDefs are tools as a request sends them (what each model call pays
// for them, and what pm's overhead is measured on).
func ToolDefs(tools []Tool) []openai.Tool {
	var defs []openai.Tool
	for _, t := range tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		defs = append(defs, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return defs
}

// stream makes one streaming attempt and assembles the assistant message.
// Tool-call deltas are merged by their index (id, type and name come on the
// first delta of a call, argument fragments on the following ones). A stream
// that ends without a finish_reason is errTruncated.
func (l *Loop) stream(ctx context.Context, req openai.ChatCompletionRequest, turn int64) (openai.ChatCompletionMessage, Usage, string, error) {
	var (
		content strings.Builder
		calls   []*openai.ToolCall
		byIndex = map[int]*openai.ToolCall{}
		args    = map[*openai.ToolCall]*strings.Builder{}
		finish  string
		usage   *openai.Usage
		pend    string // streamed text held back: it may be the start of a secret
		secrets = l.secrets()
	)
	s, err := l.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return openai.ChatCompletionMessage{}, Usage{}, "", err
	}
	defer s.Close()
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return openai.ChatCompletionMessage{}, Usage{}, "", err
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if d := ch.Delta.Content; d != "" {
				content.WriteString(d)
				if l.OnDelta != nil {
					var out string
					out, pend = secrets.MaskStream(pend + d)
					l.delta(out)
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				var c *openai.ToolCall
				if tc.Index != nil {
					c = byIndex[*tc.Index]
				} else if tc.ID == "" && len(calls) > 0 {
					c = calls[len(calls)-1] // index-less continuation (some local servers)
				}
				if c == nil {
					c = &openai.ToolCall{}
					if tc.Index != nil {
						idx := *tc.Index
						c.Index = &idx
						byIndex[idx] = c
					}
					calls = append(calls, c)
					args[c] = &strings.Builder{}
				}
				if tc.ID != "" {
					c.ID = tc.ID
				}
				if tc.Type != "" {
					c.Type = tc.Type
				}
				if tc.Function.Name != "" {
					c.Function.Name = tc.Function.Name
				}
				args[c].WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	if finish == "" {
		return openai.ChatCompletionMessage{}, Usage{}, "", errTruncated
	}
	if pend != "" {
		l.delta(secrets.Mask(pend)) // held back as a possible secret's start; it was not one
	}
	sort.SliceStable(calls, func(i, j int) bool {
		return calls[i].Index != nil && calls[j].Index != nil && *calls[i].Index < *calls[j].Index
	})
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content.String()}
	for i, c := range calls {
		if c.Function.Name == "" {
			continue // a call the model never named cannot be answered or echoed
		}
		tc := openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction, Function: c.Function}
		tc.Function.Arguments = args[c].String()
		if strings.TrimSpace(tc.Function.Arguments) == "" {
			tc.Function.Arguments = "{}"
		}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_pm_%d_%d", turn, i)
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	return msg, usageOf(usage, req.Messages, msg), finish, nil
}

// usageOf is what a response used: the endpoint's usage, or an estimate
// when it reported none.
func usageOf(u *openai.Usage, prompt []openai.ChatCompletionMessage, reply openai.ChatCompletionMessage) Usage {
	if u == nil || u.TotalTokens <= 0 {
		p, c := estimateTokens(prompt, reply)
		return Usage{Prompt: p, Completion: c, Estimated: true}
	}
	out := Usage{Prompt: int64(u.PromptTokens), Completion: int64(u.CompletionTokens)}
	if d := u.PromptTokensDetails; d != nil {
		out.Cached = int64(min(d.CachedTokens, u.PromptTokens))
	}
	if out.Prompt+out.Completion != int64(u.TotalTokens) {
		// An endpoint whose parts do not add up: keep its total (the token
		// budget has always counted it) in the completion.
		out.Completion = int64(u.TotalTokens) - out.Prompt
		if out.Completion < 0 {
			out.Prompt, out.Completion = int64(u.TotalTokens), 0
			out.Cached = min(out.Cached, out.Prompt)
		}
	}
	return out
}

// estimateTokens stands in for usage an endpoint did not report (about four
// characters a token), so the token budget still bites: the prompt's and
// the reply's.
func estimateTokens(prompt []openai.ChatCompletionMessage, reply openai.ChatCompletionMessage) (int64, int64) {
	count := func(m openai.ChatCompletionMessage) int {
		n := len(m.Content) + 4
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		return n
	}
	p := 0
	for _, m := range prompt {
		p += count(m)
	}
	r := count(reply)
	return int64(p+3) / 4, int64(r+3) / 4
}

// runTools runs every call of one turn concurrently and returns their
// results in call order. A call held by the loop breaker (held[i] set) is
// not run: held[i] is its result.
func (l *Loop) runTools(ctx context.Context, calls []openai.ToolCall, held []string) []string {
	results := make([]string, len(calls))
	var wg sync.WaitGroup
	for i, tc := range calls {
		if held != nil && held[i] != "" {
			results[i] = l.secrets().Mask(held[i])
			continue
		}
		// A tool gets the arguments masked too: whatever it records (a
		// thought on the bus, a message in a room, a file) never holds a secret.
		tc.Function.Arguments = l.secrets().Mask(tc.Function.Arguments)
		l.emit(Event{Kind: EventToolCall, Turn: l.Used.Turns, Tool: tc.Function.Name, CallID: tc.ID, Args: tc.Function.Arguments})
		wg.Go(func() {
			out, isErr := l.callTool(ctx, tc)
			// Mask before cutting, so a cut never leaves part of a secret.
			results[i] = truncate(l.secrets().Mask(out), MaxToolResult)
			l.emit(Event{Kind: EventToolResult, Turn: l.Used.Turns, Tool: tc.Function.Name, CallID: tc.ID, Text: results[i], IsError: isErr})
		})
	}
	wg.Wait()
	for i, tc := range calls { // in call order: the loop breaker counts calls in a row
		if held == nil || held[i] == "" {
			l.Repeats.Record(tc.Function.Name, l.secrets().Mask(tc.Function.Arguments), results[i])
		}
	}
	return results
}

// callTool runs one call under ToolTimeout; every failure is a result text.
func (l *Loop) callTool(ctx context.Context, tc openai.ToolCall) (out string, isErr bool) {
	var tool *Tool
	for i := range l.Tools {
		if l.Tools[i].Name == tc.Function.Name {
			tool = &l.Tools[i]
		}
	}
	if tool == nil || tool.Call == nil {
		names := make([]string, len(l.Tools))
		for i, t := range l.Tools {
			names[i] = t.Name
		}
		return fmt.Sprintf("error: unknown tool %q; available: %s", tc.Function.Name, strings.Join(names, ", ")), true
	}
	if !json.Valid([]byte(tc.Function.Arguments)) {
		return fmt.Sprintf("error: the arguments are not valid JSON: %s", tc.Function.Arguments), true
	}
	ctx, cancel := context.WithTimeout(ctx, l.toolTimeout())
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			out, isErr = fmt.Sprintf("error: tool %s panicked: %v", tool.Name, r), true
		}
	}()
	res, err := tool.Call(ctx, json.RawMessage(tc.Function.Arguments))
	switch {
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return fmt.Sprintf("error: tool %s timed out after %s: %v", tool.Name, l.toolTimeout(), err), true
	case err != nil:
		return "error: " + err.Error(), true
	case res == "":
		return "(no output)", false
	}
	return res, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-cut)
}

func (l *Loop) emit(ev Event) {
	if l.OnEvent == nil {
		return
	}
	secrets := l.secrets()
	ev.Text = secrets.Mask(ev.Text)
	ev.Args = secrets.Mask(ev.Args)
	l.cb.Lock()
	defer l.cb.Unlock()
	l.OnEvent(ev)
}

// secrets is what this Loop masks: Loop.Secrets and the provider key.
func (l *Loop) secrets() secret.Set { return l.Secrets.With(l.Provider.APIKey) }

// delta passes streamed text to OnDelta.
func (l *Loop) delta(text string) {
	if text == "" || l.OnDelta == nil {
		return
	}
	l.cb.Lock()
	l.OnDelta(text)
	l.cb.Unlock()
}

func (l *Loop) mask(err error) error { return maskErr(err, l.secrets()) }

func (l *Loop) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Loop) elapsed() time.Duration { return l.now().Sub(l.Started) }

func (l *Loop) sleep(ctx context.Context, d time.Duration) error {
	if l.Sleep != nil {
		return l.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

func (l *Loop) callTimeout() time.Duration {
	if l.CallTimeout > 0 {
		return l.CallTimeout
	}
	return DefaultCallTimeout
}

func (l *Loop) toolTimeout() time.Duration {
	if l.ToolTimeout > 0 {
		return l.ToolTimeout
	}
	return DefaultToolTimeout
}
