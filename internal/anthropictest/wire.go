package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// wireRequest is the part of a Messages request the server reads.
type wireRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// block is a content block of a request message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`          // tool_use
	ToolUseID string          `json:"tool_use_id"` // tool_result
	Content   json.RawMessage `json:"content"`     // tool_result: string or blocks
}

func decode(body []byte) (Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, fmt.Errorf("invalid request body: %v", err)
	}
	if len(w.Messages) == 0 {
		return Request{}, fmt.Errorf("messages: at least one message is required")
	}
	if err := validate(w); err != nil {
		return Request{}, err
	}
	req := Request{Model: w.Model, Stream: w.Stream}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for _, m := range w.Messages {
		msg := Message{Role: m.Role}
		text, results := flatten(m.Content)
		msg.Text, msg.ToolResults = text, results
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// flatten joins a content's text blocks and collects its tool results' text.
func flatten(raw json.RawMessage) (string, []string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return "", nil
	}
	var text []string
	var results []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_result":
			t, _ := flatten(b.Content)
			results = append(results, t)
		}
	}
	return strings.Join(text, "\n"), results
}

// reply is one assistant message being sent.
type reply struct {
	id, model   string
	turn        Turn
	out         int
	toolIDs     []string
	stopReason  string
	inputTokens int
}

func newReply(id string, req Request, turn Turn, inputTokens int) *reply {
	r := &reply{id: id, model: req.Model, turn: turn, inputTokens: inputTokens, stopReason: "end_turn"}
	if r.model == "" {
		r.model = "claude-test"
	}
	for i := range turn.Tools {
		r.toolIDs = append(r.toolIDs, fmt.Sprintf("toolu_%s_%d", strings.TrimPrefix(id, "msg_"), i))
	}
	if len(turn.Tools) > 0 {
		r.stopReason = "tool_use"
	}
	r.out = tokens(turn.Text) + 10*len(turn.Tools)
	return r
}

func (r *reply) usage(final bool) map[string]any {
	out := 1
	if final {
		out = r.out
	}
	return map[string]any{"input_tokens": r.inputTokens, "output_tokens": out,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

// content is the message's blocks, filled (final) or empty as streamed.
func (r *reply) content() []map[string]any {
	var out []map[string]any
	if r.turn.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": r.turn.Text})
	}
	for i, t := range r.turn.Tools {
		out = append(out, map[string]any{"type": "tool_use", "id": r.toolIDs[i], "name": t.Name, "input": t.Input})
	}
	return out
}

// message is the whole message object (final), or the one message_start
// carries: no content, no stop reason yet.
func (r *reply) message(final bool) map[string]any {
	m := map[string]any{"id": r.id, "type": "message", "role": "assistant", "model": r.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": r.usage(false)}
	if final {
		m["content"], m["stop_reason"], m["usage"] = r.content(), r.stopReason, r.usage(true)
	}
	return m
}

// stream writes the reply as the API's server-sent events.
func (r *reply) stream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_"+strings.TrimPrefix(r.id, "msg_"))
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": r.message(false)})
	send("ping", map[string]any{"type": "ping"})
	index := 0
	if r.turn.Text != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, piece := range words(r.turn.Text) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": piece}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for i, t := range r.turn.Tools {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": r.toolIDs[i], "name": t.Name, "input": map[string]any{}}})
		input, _ := json.Marshal(t.Input)
		for _, piece := range chunks(string(input), 24) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.out}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// words splits text into word-sized pieces that join back to it.
func words(text string) []string {
	var out []string
	start := 0
	for i, c := range text {
		if c == ' ' && i > start {
			out = append(out, text[start:i])
			start = i
		}
	}
	return append(out, text[start:])
}

// chunks splits s into pieces of at most n bytes, never inside a UTF-8 sequence.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// validate applies the conversation checks of the real API, with its
// messages: roles user, assistant and system only (a system message, which
// Claude Code 2.1 sends between the others, is passed over), a user's first, each tool_use
// answered by a tool_result in the next message and each tool_result
// answering a tool_use of the message before it (a conversation cut before
// a tool result, or with a call left unanswered, is refused). Messages of
// one role in a row are accepted: the API joins them.
func validate(w wireRequest) error {
	var calls []string // the tool_use ids of the message before
	for i, m := range w.Messages {
		if m.Role != "user" && m.Role != "assistant" && m.Role != "system" {
			return fmt.Errorf("messages.%d.role: Input should be 'user', 'assistant' or 'system'", i)
		}
		if i == 0 && m.Role != "user" {
			return fmt.Errorf("messages: first message must use the \"user\" role")
		}
		if m.Role == "system" {
			// Claude Code 2.1 sends context as system messages between
			// the others (its agent types, reminders); the API takes them.
			continue
		}
		var blocks []block
		_ = json.Unmarshal(m.Content, &blocks) // a string content has no blocks
		var uses, answered []string
		for j, b := range blocks {
			switch b.Type {
			case "tool_use":
				uses = append(uses, b.ID)
			case "tool_result":
				if m.Role != "user" || !slices.Contains(calls, b.ToolUseID) {
					return fmt.Errorf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
						"Each `tool_result` block must have a corresponding `tool_use` block in the previous message", i, j, b.ToolUseID)
				}
				answered = append(answered, b.ToolUseID)
			}
		}
		var missing []string
		for _, id := range calls {
			if !slices.Contains(answered, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message", i-1, strings.Join(missing, ", "))
		}
		calls = uses
	}
	return nil // a last assistant message's calls: a prefill, not answered yet
}
