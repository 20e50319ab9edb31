package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// LoadScript reads a script: a JSON array of replies with snake_case fields.
// Durations are Go duration strings ("150ms", "2s"). A tool call's
// "arguments" may be a JSON string (the raw wire text) or any other JSON
// value, which is then used compacted as the arguments text. Unknown fields
// are rejected.
//
//	[
//	  {"content": "Let me look.", "chunk_delay": "30ms",
//	   "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "go.mod"}}]},
//	  {"status": 429, "retry_after": "1s", "error_message": "slow down"},
//	  {"content": "Done.", "delay": "500ms",
//	   "usage": {"prompt_tokens": 120, "completion_tokens": 3}}
//	]
func LoadScript(r io.Reader) ([]Reply, error) {
	var raw []scriptReply
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("openaitest: script: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("openaitest: script: trailing data after the array")
	}
	out := make([]Reply, len(raw))
	for i, sr := range raw {
		rep, err := sr.reply()
		if err != nil {
			return nil, fmt.Errorf("openaitest: script reply %d: %w", i, err)
		}
		out[i] = rep
	}
	return out, nil
}

type scriptReply struct {
	Content      string           `json:"content"`
	ToolCalls    []scriptToolCall `json:"tool_calls"`
	Status       int              `json:"status"`
	ErrorMessage string           `json:"error_message"`
	RetryAfter   string           `json:"retry_after"`
	Delay        string           `json:"delay"`
	ChunkDelay   string           `json:"chunk_delay"`
	Usage        *Usage           `json:"usage"`
}

type scriptToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (sr scriptReply) reply() (Reply, error) {
	r := Reply{Content: sr.Content, Status: sr.Status, ErrorMessage: sr.ErrorMessage, Usage: sr.Usage}
	for _, d := range []struct {
		name string
		text string
		dst  *time.Duration
	}{
		{"retry_after", sr.RetryAfter, &r.RetryAfter},
		{"delay", sr.Delay, &r.Delay},
		{"chunk_delay", sr.ChunkDelay, &r.ChunkDelay},
	} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil || v < 0 {
			return Reply{}, fmt.Errorf("%s: invalid duration %q", d.name, d.text)
		}
		*d.dst = v
	}
	for j, tc := range sr.ToolCalls {
		if tc.Name == "" {
			return Reply{}, fmt.Errorf("tool call %d: missing name", j)
		}
		args, err := argumentsText(tc.Arguments)
		if err != nil {
			return Reply{}, fmt.Errorf("tool call %d: arguments: %w", j, err)
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	return r, nil
}

func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "{}", nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	return buf.String(), nil
}
