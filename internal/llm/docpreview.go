package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Code-designer mode's doc preview (issue 12, P002): with Loop.DocPreview
// set, a tool call runs only after the model has seen the start of its
// tool's documentation and asked for the call again.
//
// The protocol, one extra model turn per round:
//  1. The model asks for calls whose tools were not previewed in the round
//     just before. None of them runs: each is answered with a tool result
//     that starts with previewMarker and holds its doc's first lines and
//     what to do next (an EventDocPreview each); a call to a tool the loop
//     does not offer gets the unknown-tool error, as without the mode.
//  2. The model answers. Each call it now makes is compared with the
//     previewed ones: the same tool with the same arguments (as JSON
//     values) is "confirmed", any other call to a previewed tool is
//     "revised"; a previewed call it does not repeat is "dropped" (an
//     EventDocDecision each). If every call's tool was previewed they run,
//     each result starting with a line saying the decision, so the
//     transcript records it too; a call to a tool not yet previewed starts
//     a new round at 1 instead. An answer without calls drops them all.
//
// The previews are tool results, so every request stays valid for the API
// and the transcript holds them. After a crash the pending round is read
// back from the transcript's tail (answered only by previews), so a resumed
// agent does not preview the same calls twice.

// previewMarker starts every preview result; it is how a reloaded
// transcript's pending round is recognised.
const previewMarker = "code-designer: not run yet."

// Decisions on a previewed call.
const (
	DecisionConfirmed = "confirmed"
	DecisionRevised   = "revised"
	DecisionDropped   = "dropped"
)

// previewResult is the tool result that stands for a call not run yet.
func previewResult(tc openai.ToolCall, doc string) string {
	name := tc.Function.Name
	return fmt.Sprintf("%s Documentation of %s (first lines):\n\n%s\n\n"+
		"Check your call against it. To run it, call %s again: with the same arguments to confirm, "+
		"or with corrected arguments to revise. Call another tool, or answer without tools, to drop it.",
		previewMarker, name, doc, name)
}

// needsPreview reports whether any call's tool was not previewed in the
// pending round.
func (l *Loop) needsPreview(calls []openai.ToolCall) bool {
	if l.DocPreview == nil {
		return false
	}
	previewed := map[string]bool{}
	for _, p := range l.pending {
		previewed[p.Function.Name] = true
	}
	for _, tc := range calls {
		if !previewed[tc.Function.Name] && l.hasTool(tc.Function.Name) {
			return true
		}
	}
	return false
}

// hasTool reports whether the loop offers a tool of that name (a call to
// any other is answered with the unknown-tool error, preview or not).
func (l *Loop) hasTool(name string) bool {
	for _, t := range l.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// preview answers calls with their docs' previews and makes them the
// pending round; the decision on the round before, if any, is reported.
func (l *Loop) preview(calls []openai.ToolCall) error {
	l.decide(calls)
	results := make([]string, len(calls))
	for i, tc := range calls {
		if !l.hasTool(tc.Function.Name) {
			results[i], _ = l.callTool(context.Background(), tc) // runs nothing: says the tool is unknown
			continue
		}
		doc := l.DocPreview(tc.Function.Name)
		results[i] = previewResult(tc, doc)
		l.emit(Event{Kind: EventDocPreview, Turn: l.Used.Turns, Tool: tc.Function.Name, CallID: tc.ID,
			Args: tc.Function.Arguments, Text: doc})
	}
	if err := l.appendResults(calls, results); err != nil {
		return err
	}
	l.pending = nil
	for _, tc := range calls {
		if l.hasTool(tc.Function.Name) {
			l.pending = append(l.pending, tc)
		}
	}
	return nil
}

// decide reports the decision on each pending call and each new call and
// clears the round; it returns the decision of each new call (for the
// result's first line).
func (l *Loop) decide(calls []openai.ToolCall) []string {
	if len(l.pending) == 0 {
		return nil
	}
	left := append([]openai.ToolCall(nil), l.pending...)
	decisions := make([]string, len(calls))
	for i, tc := range calls {
		decisions[i] = DecisionRevised
		for j, p := range left {
			if sameCall(p, tc) {
				decisions[i] = DecisionConfirmed
				left = append(left[:j], left[j+1:]...)
				break
			}
		}
		l.emit(Event{Kind: EventDocDecision, Turn: l.Used.Turns, Tool: tc.Function.Name, CallID: tc.ID,
			Args: tc.Function.Arguments, Text: decisions[i]})
	}
	for _, p := range left {
		l.emit(Event{Kind: EventDocDecision, Turn: l.Used.Turns, Tool: p.Function.Name, CallID: p.ID,
			Args: p.Function.Arguments, Text: DecisionDropped})
	}
	l.pending = nil
	return decisions
}

// noteDecisions puts the decision on the first line of each result.
func noteDecisions(results, decisions []string) {
	for i := range results {
		if i < len(decisions) {
			results[i] = fmt.Sprintf("code-designer: %s after the doc preview.\n%s", decisions[i], results[i])
		}
	}
}

// sameCall: the same tool with the same arguments as JSON values (key order
// and spacing aside).
func sameCall(a, b openai.ToolCall) bool {
	if a.Function.Name != b.Function.Name {
		return false
	}
	return canonical(a.Function.Arguments) == canonical(b.Function.Arguments)
}

func canonical(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return strings.TrimSpace(args)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// pendingFromHistory finds a round a crash left pending: the last assistant
// message's calls, when the history ends with their results and every one
// of them is a preview.
func pendingFromHistory(h []openai.ChatCompletionMessage) []openai.ToolCall {
	i := len(h) - 1
	for i >= 0 && h[i].Role == openai.ChatMessageRoleTool {
		if !strings.HasPrefix(h[i].Content, previewMarker) {
			return nil
		}
		i--
	}
	if i < 0 || i == len(h)-1 || h[i].Role != openai.ChatMessageRoleAssistant || len(h[i].ToolCalls) != len(h)-1-i {
		return nil
	}
	return h[i].ToolCalls
}
