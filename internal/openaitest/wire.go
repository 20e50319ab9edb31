package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ---- incoming ----------------------------------------------------------

type wireRequest struct {
	Model         *string          `json:"model"`
	Messages      []wireMessage    `json:"messages"`
	Tools         []Tool           `json:"tools"`
	ToolChoice    json.RawMessage  `json:"tool_choice"`
	Stream        bool             `json:"stream"`
	StreamOptions *json.RawMessage `json:"stream_options"`
	// ResponseFormat is decoded loosely, so validate can name a bad field.
	ResponseFormat *wireResponseFormat `json:"response_format"`
}

type wireResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   *string         `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict"`
	} `json:"json_schema"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []inToolCall    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// inToolCall is a tool call of an incoming assistant message; pointers tell
// absent fields from empty ones.
type inToolCall struct {
	ID       string  `json:"id"`
	Type     *string `json:"type"`
	Function struct {
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// decodeContent flattens a message's "content": a string, null, or an array
// of parts of which only the text parts are kept.
func decodeContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// parseRequest decodes a request body; it fails only on malformed JSON.
func parseRequest(body []byte) (w wireRequest, req Request, _ *apiError) {
	if err := json.Unmarshal(body, &w); err != nil {
		return w, req, &apiError{
			status: 400,
			Message: "We could not parse the JSON body of your request. " +
				"(HINT: This likely means you aren't using your HTTP library correctly. " +
				"The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
			Type: "invalid_request_error",
		}
	}
	req = Request{Stream: w.Stream, Tools: w.Tools, ToolChoice: w.ToolChoice}
	if rf := w.ResponseFormat; rf != nil {
		req.ResponseFormat = &ResponseFormat{Type: rf.Type}
		if rf.JSONSchema != nil {
			req.ResponseFormat.Name = deref(rf.JSONSchema.Name)
			req.ResponseFormat.Schema = rf.JSONSchema.Schema
			req.ResponseFormat.Strict = rf.JSONSchema.Strict
		}
	}
	if w.Model != nil {
		req.Model = *w.Model
	}
	if w.StreamOptions != nil {
		var so wireStreamOptions
		if err := json.Unmarshal(*w.StreamOptions, &so); err == nil {
			req.IncludeUsage = so.IncludeUsage
		}
	}
	for i, wm := range w.Messages {
		content, err := decodeContent(wm.Content)
		if err != nil {
			return w, req, invalidParam(fmt.Sprintf("messages.[%d].content", i),
				"Invalid type for 'messages[%d].content': expected one of a string or array of objects.", i)
		}
		m := Message{Role: wm.Role, Content: content, Name: wm.Name, ToolCallID: wm.ToolCallID}
		for _, tc := range wm.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Name: deref(tc.Function.Name), Arguments: deref(tc.Function.Arguments)})
		}
		req.Messages = append(req.Messages, m)
	}
	return w, req, nil
}

// validateResponseFormat applies the real API's checks on response_format:
// a known type; for json_schema a name matching ^[a-zA-Z0-9_-]{1,64}$ and a
// schema that is a JSON object; for json_object the word "json" somewhere in
// the messages.
func validateResponseFormat(rf *wireResponseFormat, msgs []Message) *apiError {
	if rf == nil {
		return nil
	}
	switch rf.Type {
	case "text":
	case "json_object":
		for _, m := range msgs {
			if strings.Contains(strings.ToLower(m.Content), "json") {
				return nil
			}
		}
		return invalidParam("messages", "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
	case "json_schema":
		js := rf.JSONSchema
		if js == nil {
			return missingParam("response_format.json_schema")
		}
		if js.Name == nil {
			return missingParam("response_format.json_schema.name")
		}
		if !validFunctionName(*js.Name) {
			return invalidParam("response_format.json_schema.name",
				"Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.")
		}
		if s := bytes.TrimSpace(js.Schema); len(s) > 0 && s[0] != '{' {
			return invalidParam("response_format.json_schema.schema",
				"Invalid type for 'response_format.json_schema.schema': expected an object, but got %s instead.", jsonKind(s))
		}
	default:
		return invalidParam("response_format.type",
			"Invalid value: '%s'. Supported values are: 'json_object', 'json_schema', and 'text'.", rf.Type)
	}
	return nil
}

func jsonKind(raw []byte) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// validFunctionName reports whether name matches the API's ^[a-zA-Z0-9_-]{1,64}$.
// A loop rather than a regexp: this package is linked into every pm process
// (for pm demo) and the bounded repetition compiled at init cost more than
// the rest of a short command's start-up.
func validFunctionName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validate applies the request checks of the real API that an agent loop is
// most likely to trip over: model and messages present, stream_options only
// with stream, message roles, complete assistant tool calls and their
// pairing with tool results, and tool definitions.
func validate(w wireRequest, req Request) *apiError {
	if req.Model == "" {
		return &apiError{status: 400, Message: "you must provide a model parameter", Type: "invalid_request_error"}
	}
	if w.StreamOptions != nil && !req.Stream {
		return invalidParam("stream_options",
			"The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	if len(req.Messages) == 0 {
		return invalidParam("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	if e := validateResponseFormat(w.ResponseFormat, req.Messages); e != nil {
		return e
	}
	for i, t := range req.Tools {
		if t.Type != "function" {
			return invalidParam(fmt.Sprintf("tools[%d].type", i),
				"Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type)
		}
		if !validFunctionName(t.Function.Name) {
			return invalidParam(fmt.Sprintf("tools[%d].function.name", i),
				"Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
	}
	for i, wm := range w.Messages {
		for j, tc := range wm.ToolCalls {
			at := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
			switch {
			case tc.ID == "":
				return missingParam(at + ".id")
			case tc.Type == nil:
				return missingParam(at + ".type")
			case *tc.Type != "function":
				return invalidParam(strings.ReplaceAll(at, "[", ".[")+".type",
					"Invalid value: '%s'. Supported values are: 'function' and 'custom'.", *tc.Type)
			case tc.Function.Name == nil:
				return missingParam(at + ".function.name")
			case tc.Function.Arguments == nil:
				return missingParam(at + ".function.arguments")
			}
		}
	}
	// pending holds the tool_call ids of the last assistant message that
	// still await a tool message; owner is that message's index.
	var pending []string
	owner := -1
	for i, m := range req.Messages {
		if !validRoles[m.Role] {
			return invalidParam(fmt.Sprintf("messages.[%d].role", i),
				"Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
		}
		if m.Role == "tool" {
			if m.ToolCallID == "" {
				return invalidParam(fmt.Sprintf("messages.[%d].tool_call_id", i),
					"Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.")
			}
			j := indexOf(pending, m.ToolCallID)
			if owner < 0 || j < 0 {
				return invalidParam(fmt.Sprintf("messages.[%d].role", i),
					"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			pending = append(pending[:j], pending[j+1:]...)
			continue
		}
		if len(pending) > 0 {
			return missingToolResponses(owner, pending)
		}
		owner = -1
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			owner = i
			for _, tc := range m.ToolCalls {
				pending = append(pending, tc.ID)
			}
		}
	}
	if len(pending) > 0 {
		return missingToolResponses(owner, pending)
	}
	return nil
}

func missingToolResponses(owner int, ids []string) *apiError {
	return invalidParam(fmt.Sprintf("messages.[%d].role", owner),
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "+
			"The following tool_call_ids did not have response messages: %s", strings.Join(ids, ", "))
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// ---- outgoing ----------------------------------------------------------

// apiError is the "error" object of an OpenAI error body. Param and Code are
// null when empty, as on the real API.
type apiError struct {
	status  int
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func invalidParam(param, format string, args ...any) *apiError {
	return &apiError{status: 400, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error", Param: &param}
}

// missingParam takes a path such as "messages[1].tool_calls[0].id"; the
// param field spells it "messages.[1].tool_calls.[0].id".
func missingParam(path string) *apiError {
	return invalidParam(strings.ReplaceAll(path, "[", ".["), "Missing required parameter: '%s'.", path)
}

func strPtr(s string) *string { return &s }

type completion struct {
	ID                string    `json:"id"`
	Object            string    `json:"object"`
	Created           int64     `json:"created"`
	Model             string    `json:"model"`
	Choices           []choice  `json:"choices"`
	Usage             wireUsage `json:"usage"`
	ServiceTier       string    `json:"service_tier"`
	SystemFingerprint string    `json:"system_fingerprint"`
}

type choice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type responseMessage struct {
	Role        string         `json:"role"`
	Content     *string        `json:"content"`
	Refusal     *string        `json:"refusal"`
	ToolCalls   []wireToolCall `json:"tool_calls,omitempty"`
	Annotations []struct{}     `json:"annotations"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	ServiceTier       string        `json:"service_tier"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	// Usage is absent unless stream_options.include_usage was requested;
	// then it is null on every chunk but the final usage chunk.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []deltaToolCall `json:"tool_calls,omitempty"`
	Refusal   json.RawMessage `json:"refusal,omitempty"`
}

type deltaToolCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function deltaFunction `json:"function"`
}

type deltaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

var jsonNull = json.RawMessage("null")

// streamDeltas returns the deltas of a streamed reply, in order, without the
// final (empty, finish_reason-bearing) one. The first delta carries the role;
// content comes word by word; each tool call opens with a delta carrying its
// index, id, type, name and empty arguments, followed by deltas carrying only
// the index and a fragment of the arguments.
func streamDeltas(content string, calls []ToolCall) []delta {
	first := delta{Role: "assistant", Refusal: jsonNull}
	var out []delta
	if content != "" || len(calls) == 0 {
		first.Content = strPtr("")
		out = append(out, first)
		for _, piece := range splitWords(content) {
			out = append(out, delta{Content: strPtr(piece)})
		}
	}
	for i, tc := range calls {
		head := deltaToolCall{Index: i, ID: tc.ID, Type: "function", Function: deltaFunction{Name: tc.Name}}
		if len(out) == 0 {
			// Tool calls without content: the role rides on the first call,
			// with "content": null.
			first.ToolCalls = []deltaToolCall{head}
			out = append(out, first)
		} else {
			out = append(out, delta{ToolCalls: []deltaToolCall{head}})
		}
		for _, frag := range splitFragments(tc.Arguments) {
			out = append(out, delta{ToolCalls: []deltaToolCall{{Index: i, Function: deltaFunction{Arguments: frag}}}})
		}
	}
	return out
}

// splitWords cuts s into pieces shaped like tokens: a run of spaces followed
// by a word, at most 16 runes each.
func splitWords(s string) []string {
	var out []string
	start, n := 0, 0
	inWord := false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if i > start && ((inWord && space) || n == 16) {
			out = append(out, s[start:i])
			start, n, inWord = i, 0, false
		}
		if !space {
			inWord = true
		}
		n++
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitFragments cuts a tool call's arguments into fragments of a few runes
// (more for long arguments, to bound the chunk count), so that no fragment
// but the last is valid JSON on its own.
func splitFragments(s string) []string {
	size := max(4, (utf8.RuneCountInString(s)+47)/48)
	var out []string
	start, n := 0, 0
	for i := range s {
		if n == size {
			out = append(out, s[start:i])
			start, n = i, 0
		}
		n++
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// estimateTokens is the rough four-characters-a-token rule, at least 1 for
// non-empty text.
func estimateTokens(s string) int {
	n := utf8.RuneCountInString(s)
	return (n + 3) / 4
}

func promptTokens(req Request) int {
	total := 3 // priming of the reply
	for _, m := range req.Messages {
		total += 4 + estimateTokens(m.Content) + estimateTokens(m.Name)
		for _, tc := range m.ToolCalls {
			total += 3 + estimateTokens(tc.Name) + estimateTokens(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		total += 8 + estimateTokens(t.Function.Name) + estimateTokens(t.Function.Description) +
			estimateTokens(string(t.Function.Parameters))
	}
	return total
}

// wire is u as the API sends it: the cached part of the prompt in
// prompt_tokens_details.
func (u Usage) wire() wireUsage {
	w := wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	w.PromptTokensDetails.CachedTokens = u.CachedTokens
	return w
}

func replyUsage(req Request, r Reply) Usage {
	if r.Usage != nil {
		u := *r.Usage
		if u.TotalTokens == 0 {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
		return u
	}
	completion := estimateTokens(r.Content)
	for _, tc := range r.ToolCalls {
		completion += 3 + estimateTokens(tc.Name) + estimateTokens(tc.Arguments)
	}
	completion = max(completion, 1)
	prompt := promptTokens(req)
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}
