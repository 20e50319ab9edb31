package llm

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/loopguard"
)

// RepeatError is a loop breaker's stop: the tool call the model kept
// making with the same arguments and the same result.
type RepeatError struct {
	Hit    loopguard.Hit
	Reason string // why the loop stopped (the host's words); empty: no host decided
}

func (e *RepeatError) Error() string {
	s := fmt.Sprintf("loop: %s called %s in a row with the same arguments %s and the same result", e.Hit.Name, Times(e.Hit.Times), clipArgs(e.Hit.Args))
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// holdRepeats asks the loop breaker about each call of a response before
// any runs: held[i] is the result of a call not to run ("" runs it). An
// error stops the loop; every call of the response is then answered with
// it, so the transcript stays valid.
func (l *Loop) holdRepeats(ctx context.Context, calls []openai.ToolCall) ([]string, error) {
	if l.Repeats == nil {
		return nil, nil
	}
	var held []string
	for i, tc := range calls {
		args := l.secrets().Mask(tc.Function.Arguments)
		h, hit := l.Repeats.Check(tc.Function.Name, args)
		if !hit {
			continue
		}
		var refusal string
		var err error
		if l.OnRepeat == nil {
			err = &RepeatError{Hit: h}
		} else {
			refusal, err = l.OnRepeat(ctx, h)
		}
		if err != nil {
			err = l.mask(err)
			results := make([]string, len(calls))
			for j := range results {
				results[j] = "error: not run: " + err.Error()
			}
			if aerr := l.appendResults(calls, results); aerr != nil {
				return nil, aerr
			}
			l.emit(Event{Kind: EventRepeat, Turn: l.Used.Turns, Tool: tc.Function.Name, CallID: tc.ID, Args: args, Text: err.Error()})
			return nil, err
		}
		if refusal == "" {
			l.Repeats.Reset() // the human let it go on: count again from here
			l.emit(Event{Kind: EventRepeat, Turn: l.Used.Turns, Tool: tc.Function.Name, CallID: tc.ID, Args: args, Text: "allowed"})
			continue
		}
		if held == nil {
			held = make([]string, len(calls))
		}
		held[i] = refusal
		l.emit(Event{Kind: EventRepeat, Turn: l.Used.Turns, Tool: tc.Function.Name, CallID: tc.ID, Args: args, Text: refusal})
	}
	return held, nil
}

// Times is "1 time" or "n times".
func Times(n int) string {
	if n == 1 {
		return "1 time"
	}
	return fmt.Sprintf("%d times", n)
}

// clipArgs shortens arguments for a message.
func clipArgs(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
