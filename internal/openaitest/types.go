package openaitest

import (
	"encoding/json"
	"net/http"
	"time"
)

// Reply is one scripted assistant turn. The zero Reply is a valid, empty
// assistant message that finishes with "stop".
type Reply struct {
	// Content is the assistant text. In a stream it is split into several
	// chunks at word boundaries (never inside a UTF-8 sequence).
	Content string
	// ToolCalls are the function calls the assistant makes. When present the
	// choice finishes with "tool_calls"; otherwise with "stop". A call without
	// an ID gets a generated "call_…" ID.
	ToolCalls []ToolCall

	// Status, when non-zero, makes the server answer with this HTTP error
	// status and an OpenAI-style error body instead of a completion.
	Status int
	// ErrorMessage overrides the default error message when Status is set.
	ErrorMessage string
	// RetryAfter is advertised through the Retry-After (whole seconds,
	// rounded up) and retry-after-ms headers of an error reply. A 429
	// without RetryAfter advertises one second.
	RetryAfter time.Duration

	// Delay is waited before the first byte of the response is written.
	Delay time.Duration
	// ChunkDelay is waited before each stream chunk after the first.
	// It has no effect on non-streaming responses.
	ChunkDelay time.Duration

	// Usage overrides the token usage reported for this reply. By default
	// it is estimated from the lengths of the request and the reply (about
	// four characters a token). A zero TotalTokens is filled in as the sum.
	Usage *Usage
}

// ToolCall is one function call made by the assistant, or recorded from an
// assistant message of a request. Arguments is the raw JSON text, exactly as
// it travels on the wire.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the token accounting of a completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CachedTokens is the part of PromptTokens read from the provider's
	// prompt cache, sent as prompt_tokens_details.cached_tokens as the API
	// does (its price is lower; internal/cost).
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// Request is a decoded chat completion request as the server received it.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// ToolChoice is the raw "tool_choice" value ("auto", "none", an object…),
	// nil when absent.
	ToolChoice json.RawMessage `json:"tool_choice,omitempty"`
	Stream     bool            `json:"stream"`
	// IncludeUsage reports stream_options.include_usage.
	IncludeUsage bool `json:"include_usage,omitempty"`
	// ResponseFormat is the decoded "response_format", nil when absent.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`

	// Header holds the request's HTTP headers; Body its raw JSON body.
	Header http.Header `json:"-"`
	Body   []byte      `json:"-"`
}

// LastMessage returns the last message of the request (the zero Message if
// there is none). Handlers typically route on it.
func (r Request) LastMessage() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Message is one message of a request. Array-form content is flattened to
// the concatenation of its text parts.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Tool is a tool definition sent with a request, in its wire form.
type Tool struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef is the function part of a Tool.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// ResponseFormat is a request's structured-output format: Type "text",
// "json_object" or "json_schema"; for json_schema, the schema's Name, its
// raw Schema and Strict.
type ResponseFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}
