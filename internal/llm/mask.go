package llm

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/secret"
)

// maskMessage masks every text field of m that can reach the transcript.
func maskMessage(m openai.ChatCompletionMessage, secrets secret.Set) openai.ChatCompletionMessage {
	m.Content = secrets.Mask(m.Content)
	m.Refusal = secrets.Mask(m.Refusal)
	m.ReasoningContent = secrets.Mask(m.ReasoningContent)
	if m.MultiContent != nil {
		parts := make([]openai.ChatMessagePart, len(m.MultiContent))
		for i, p := range m.MultiContent {
			p.Text = secrets.Mask(p.Text)
			parts[i] = p
		}
		m.MultiContent = parts
	}
	if m.ToolCalls != nil {
		calls := make([]openai.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			tc.Function.Arguments = secrets.Mask(tc.Function.Arguments)
			calls[i] = tc
		}
		m.ToolCalls = calls
	}
	return m
}

// maskedError keeps the wrapped error reachable through errors.As/Is while
// its text never shows a secret.
type maskedError struct {
	err     error
	secrets secret.Set
}

func (e *maskedError) Error() string { return e.secrets.Mask(e.err.Error()) }
func (e *maskedError) Unwrap() error { return e.err }

func maskErr(err error, secrets secret.Set) error {
	if err == nil {
		return nil
	}
	return &maskedError{err: err, secrets: secrets}
}
