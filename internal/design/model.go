package design

import (
	"context"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/secret"
)

// Model is a chat model the engine asks for one structured answer at a
// time. Tokens is what the call spent, retries included.
type Model interface {
	Name() string
	Ask(ctx context.Context, system, user string, f Format) (text string, tokens int64, err error)
}

// LLM is a Model over llm.Loop: each question is a fresh, tool-less loop
// with the format as its JSON Schema response format, so transport
// retries, secret masking and budgets are the llm runtime's. Budget and the
// counters it spends from are shared by the supervisor and the worker: a
// budget bounds the whole design.
type LLM struct {
	Provider llm.Provider
	Budget   llm.Budget
	Spent    *llm.Counters // seeded from the design's record, updated after each call
	Started  time.Time     // start of the wall-time budget
	Secrets  secret.Set
	Retry    llm.RetryPolicy
	Sleep    func(ctx context.Context, d time.Duration) error
	// OnUsage, when set, gets each response's usage (the cost ledger).
	OnUsage func(llm.Usage)
}

// Name is the model's name, as its metrics report it.
func (m *LLM) Name() string { return m.Provider.Model }

// Ask asks the model once for an answer in format f.
func (m *LLM) Ask(ctx context.Context, system, user string, f Format) (string, int64, error) {
	l := &llm.Loop{
		Provider: m.Provider, System: system, Budget: m.Budget, Started: m.Started,
		Secrets: m.Secrets, Retry: m.Retry, Sleep: m.Sleep,
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: f.Name, Schema: f.Schema},
		},
	}
	if m.Spent != nil {
		l.Used = *m.Spent
	}
	if m.OnUsage != nil {
		l.OnEvent = func(ev llm.Event) {
			if ev.Kind == llm.EventResponse {
				m.OnUsage(ev.Usage)
			}
		}
	}
	before := l.Used.Tokens
	text, err := l.Run(ctx, user)
	if m.Spent != nil {
		*m.Spent = l.Used
	}
	return text, l.Used.Tokens - before, err
}
