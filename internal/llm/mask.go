package llm

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Masked is what Mask puts in place of a secret.
const Masked = "[masked]"

// Mask returns s with every occurrence of each non-empty secret replaced by
// Masked. It is applied to every message before it enters the history (and so
// the transcript), to every event and to every error the Loop returns.
func Mask(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Masked)
		}
	}
	return s
}

// maskMessage masks every text field of m that can reach the transcript.
func maskMessage(m openai.ChatCompletionMessage, secrets ...string) openai.ChatCompletionMessage {
	m.Content = Mask(m.Content, secrets...)
	m.Refusal = Mask(m.Refusal, secrets...)
	m.ReasoningContent = Mask(m.ReasoningContent, secrets...)
	if m.MultiContent != nil {
		parts := make([]openai.ChatMessagePart, len(m.MultiContent))
		for i, p := range m.MultiContent {
			p.Text = Mask(p.Text, secrets...)
			parts[i] = p
		}
		m.MultiContent = parts
	}
	if m.ToolCalls != nil {
		calls := make([]openai.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			tc.Function.Arguments = Mask(tc.Function.Arguments, secrets...)
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
	secrets []string
}

func (e *maskedError) Error() string { return Mask(e.err.Error(), e.secrets...) }
func (e *maskedError) Unwrap() error { return e.err }

func maskErr(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	return &maskedError{err: err, secrets: secrets}
}
