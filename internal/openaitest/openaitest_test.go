package openaitest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

const testKey = "sk-test-0123456789"

func newClient(t *testing.T, srv *openaitest.Server, key string) *openai.Client {
	t.Helper()
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = srv.URL + "/v1"
	return openai.NewClientWithConfig(cfg)
}

func start(t *testing.T, opts ...openaitest.Option) (*openaitest.Server, *openai.Client) {
	t.Helper()
	srv := openaitest.New(append([]openaitest.Option{openaitest.WithAPIKey(testKey)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv, newClient(t, srv, testKey)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func userRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    openai.GPT4oMini,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
	}
}

var parallelCalls = []openaitest.ToolCall{
	{ID: "call_read", Name: "read_file", Arguments: `{"path":"internal/store/store.go","max_bytes":4096}`},
	{ID: "call_grep", Name: "grep", Arguments: `{"pattern":"func New\\(","paths":["internal","cmd"],"ignore_case":false}`},
}

func wantToolCalls(calls []openaitest.ToolCall) []openai.ToolCall {
	var out []openai.ToolCall
	for _, c := range calls {
		out = append(out, openai.ToolCall{
			ID: c.ID, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
		})
	}
	return out
}

func TestChatCompletion(t *testing.T) {
	tests := []struct {
		name       string
		reply      openaitest.Reply
		wantFinish openai.FinishReason
		wantUsage  *openai.Usage
	}{
		{
			name:       "content",
			reply:      openaitest.Reply{Content: "Hello there, I am a fake model."},
			wantFinish: openai.FinishReasonStop,
		},
		{
			name:       "tool calls",
			reply:      openaitest.Reply{ToolCalls: parallelCalls},
			wantFinish: openai.FinishReasonToolCalls,
		},
		{
			name:       "content and tool calls",
			reply:      openaitest.Reply{Content: "Reading.", ToolCalls: parallelCalls[:1]},
			wantFinish: openai.FinishReasonToolCalls,
		},
		{
			name:       "usage override",
			reply:      openaitest.Reply{Content: "ok", Usage: &openaitest.Usage{PromptTokens: 100, CompletionTokens: 7}},
			wantFinish: openai.FinishReasonStop,
			wantUsage:  &openai.Usage{PromptTokens: 100, CompletionTokens: 7, TotalTokens: 107},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := start(t)
			srv.Enqueue(tt.reply)
			resp, err := client.CreateChatCompletion(ctxT(t), userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") ||
				resp.Model != openai.GPT4oMini || resp.Created == 0 {
				t.Errorf("envelope = %q %q %q %d", resp.Object, resp.ID, resp.Model, resp.Created)
			}
			if len(resp.Choices) != 1 {
				t.Fatalf("choices = %d", len(resp.Choices))
			}
			ch := resp.Choices[0]
			if ch.Message.Role != openai.ChatMessageRoleAssistant || ch.Message.Content != tt.reply.Content {
				t.Errorf("message = %q %q", ch.Message.Role, ch.Message.Content)
			}
			if !reflect.DeepEqual(ch.Message.ToolCalls, wantToolCalls(tt.reply.ToolCalls)) {
				t.Errorf("tool calls = %+v", ch.Message.ToolCalls)
			}
			if ch.FinishReason != tt.wantFinish {
				t.Errorf("finish_reason = %q, want %q", ch.FinishReason, tt.wantFinish)
			}
			u := resp.Usage
			if tt.wantUsage != nil {
				if u.PromptTokens != tt.wantUsage.PromptTokens || u.CompletionTokens != tt.wantUsage.CompletionTokens ||
					u.TotalTokens != tt.wantUsage.TotalTokens {
					t.Errorf("usage = %+v, want %+v", u, tt.wantUsage)
				}
			} else if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("estimated usage = %+v", u)
			}
		})
	}
}

// streamed is a stream reassembled the way a client must: content
// concatenated, tool calls accumulated by delta index.
type streamed struct {
	chunks        int
	firstRole     string
	content       string
	contentChunks int
	toolCalls     []openai.ToolCall
	argFragments  map[int]int
	finish        openai.FinishReason
	usage         *openai.Usage
	usageChunks   int
}

func readStream(t *testing.T, stream *openai.ChatCompletionStream) streamed {
	t.Helper()
	s := streamed{argFragments: map[int]int{}}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return s
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		s.chunks++
		if resp.Object != "chat.completion.chunk" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
			t.Errorf("chunk envelope = %q %q", resp.Object, resp.ID)
		}
		if resp.Usage != nil {
			s.usage = resp.Usage
			s.usageChunks++
			if len(resp.Choices) != 0 {
				t.Errorf("usage chunk has %d choices", len(resp.Choices))
			}
		}
		for _, ch := range resp.Choices {
			d := ch.Delta
			if s.chunks == 1 {
				s.firstRole = d.Role
			} else if d.Role != "" {
				t.Errorf("role repeated in chunk %d", s.chunks)
			}
			if d.Content != "" {
				s.content += d.Content
				s.contentChunks++
			}
			for _, tc := range d.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("tool call delta without index: %+v", tc)
				}
				i := *tc.Index
				for len(s.toolCalls) <= i {
					s.toolCalls = append(s.toolCalls, openai.ToolCall{})
				}
				acc := &s.toolCalls[i]
				if tc.ID != "" {
					acc.ID = tc.ID
				}
				if tc.Type != "" {
					acc.Type = tc.Type
				}
				acc.Function.Name += tc.Function.Name
				if tc.Function.Arguments != "" {
					acc.Function.Arguments += tc.Function.Arguments
					s.argFragments[i]++
				}
			}
			if ch.FinishReason != "" {
				s.finish = ch.FinishReason
			}
		}
	}
}

func TestStream(t *testing.T) {
	tests := []struct {
		name         string
		reply        openaitest.Reply
		includeUsage bool
		wantFinish   openai.FinishReason
	}{
		{
			name:       "content",
			reply:      openaitest.Reply{Content: "The quick brown fox jumps over the lazy dog."},
			wantFinish: openai.FinishReasonStop,
		},
		{
			name:       "multibyte content",
			reply:      openaitest.Reply{Content: "héllo wörld — 日本語のテキストはスペースなしで長く続きます。"},
			wantFinish: openai.FinishReasonStop,
		},
		{
			name:       "two parallel tool calls",
			reply:      openaitest.Reply{ToolCalls: parallelCalls},
			wantFinish: openai.FinishReasonToolCalls,
		},
		{
			name:       "content then tool call",
			reply:      openaitest.Reply{Content: "Let me check both files.", ToolCalls: parallelCalls},
			wantFinish: openai.FinishReasonToolCalls,
		},
		{
			name:         "usage chunk",
			reply:        openaitest.Reply{Content: "Counting tokens now.", Usage: &openaitest.Usage{PromptTokens: 42, CompletionTokens: 5}},
			includeUsage: true,
			wantFinish:   openai.FinishReasonStop,
		},
		{
			name:         "estimated usage with tool calls",
			reply:        openaitest.Reply{ToolCalls: parallelCalls},
			includeUsage: true,
			wantFinish:   openai.FinishReasonToolCalls,
		},
		{
			name:       "chunk delay",
			reply:      openaitest.Reply{Content: "slow but steady", ChunkDelay: time.Millisecond, Delay: time.Millisecond},
			wantFinish: openai.FinishReasonStop,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := start(t)
			srv.Enqueue(tt.reply)
			req := userRequest("go")
			if tt.includeUsage {
				req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			}
			stream, err := client.CreateChatCompletionStream(ctxT(t), req)
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			got := readStream(t, stream)

			if got.firstRole != openai.ChatMessageRoleAssistant {
				t.Errorf("first delta role = %q", got.firstRole)
			}
			if got.content != tt.reply.Content {
				t.Errorf("content = %q, want %q", got.content, tt.reply.Content)
			}
			if tt.reply.Content != "" && got.contentChunks < 2 {
				t.Errorf("content came in %d chunks, want several", got.contentChunks)
			}
			want := wantToolCalls(tt.reply.ToolCalls)
			if len(want) == 0 {
				want = nil
			}
			if !reflect.DeepEqual(got.toolCalls, want) {
				t.Errorf("tool calls =\n%+v\nwant\n%+v", got.toolCalls, want)
			}
			for i := range tt.reply.ToolCalls {
				if got.argFragments[i] < 2 {
					t.Errorf("tool call %d arguments came in %d fragments, want several", i, got.argFragments[i])
				}
			}
			if got.finish != tt.wantFinish {
				t.Errorf("finish_reason = %q, want %q", got.finish, tt.wantFinish)
			}
			if !tt.includeUsage {
				if got.usageChunks != 0 {
					t.Errorf("usage sent without include_usage")
				}
				return
			}
			if got.usageChunks != 1 || got.usage == nil {
				t.Fatalf("usage chunks = %d", got.usageChunks)
			}
			u := *got.usage
			if tt.reply.Usage != nil {
				if u.PromptTokens != tt.reply.Usage.PromptTokens || u.CompletionTokens != tt.reply.Usage.CompletionTokens ||
					u.TotalTokens != tt.reply.Usage.PromptTokens+tt.reply.Usage.CompletionTokens {
					t.Errorf("usage = %+v", u)
				}
			} else if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("estimated usage = %+v", u)
			}
		})
	}
}

// TestStreamWire checks the bytes on the wire, below any client library.
func TestStreamWire(t *testing.T) {
	srv := openaitest.New()
	defer srv.Close()
	srv.Enqueue(openaitest.Reply{Content: "one two", ToolCalls: parallelCalls[:1]})
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q", ct)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(string(raw), "\n\n")
	if last := events[len(events)-1]; last != "" {
		t.Fatalf("stream does not end with a blank line: %q", last)
	}
	events = events[:len(events)-1]
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("last event = %q", events[len(events)-1])
	}
	events = events[:len(events)-1]
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event %d is not a single data line: %q", i, ev)
		}
		var c map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if string(c["object"]) != `"chat.completion.chunk"` {
			t.Errorf("event %d object = %s", i, c["object"])
		}
		usage, hasUsage := c["usage"]
		if !hasUsage {
			t.Errorf("event %d lacks usage (include_usage requested)", i)
		}
		final := i == len(events)-1
		if final != (string(usage) != "null") {
			t.Errorf("event %d usage = %s", i, usage)
		}
		if final && string(c["choices"]) != "[]" {
			t.Errorf("usage chunk choices = %s", c["choices"])
		}
	}
	// The first tool-call delta carries id, type, name and empty arguments.
	if !strings.Contains(string(raw), `"tool_calls":[{"index":0,"id":"call_read","type":"function","function":{"name":"read_file","arguments":""}}]`) {
		t.Errorf("no opening tool-call delta in\n%s", raw)
	}
	if !strings.Contains(string(raw), `"delta":{},"logprobs":null,"finish_reason":"tool_calls"`) {
		t.Errorf("no final finish_reason chunk in\n%s", raw)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		reply    *openaitest.Reply
		key      string
		wantCode int
		wantType string
		wantMsg  string
	}{
		{
			name:     "rate limited",
			reply:    &openaitest.Reply{Status: 429, RetryAfter: 2 * time.Second},
			key:      testKey,
			wantCode: 429,
			wantType: "requests",
			wantMsg:  "Rate limit reached",
		},
		{
			name:     "server error",
			reply:    &openaitest.Reply{Status: 500},
			key:      testKey,
			wantCode: 500,
			wantType: "server_error",
			wantMsg:  "The server had an error",
		},
		{
			name:     "custom message",
			reply:    &openaitest.Reply{Status: 503, ErrorMessage: "overloaded"},
			key:      testKey,
			wantCode: 503,
			wantType: "server_error",
			wantMsg:  "overloaded",
		},
		{
			name:     "wrong key",
			reply:    &openaitest.Reply{Content: "never sent"},
			key:      "sk-wrong-key-000000",
			wantCode: 401,
			wantType: "invalid_request_error",
			wantMsg:  "Incorrect API key provided",
		},
		{
			name:     "no key",
			key:      "",
			wantCode: 401,
			wantType: "invalid_request_error",
			wantMsg:  "You didn't provide an API key",
		},
		{
			name:     "script exhausted",
			key:      testKey,
			wantCode: 500,
			wantType: "server_error",
			wantMsg:  "openaitest: no scripted reply left",
		},
	}
	for _, tt := range tests {
		for _, streaming := range []bool{false, true} {
			name := tt.name
			if streaming {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				srv, _ := start(t)
				client := newClient(t, srv, tt.key)
				if tt.reply != nil {
					srv.Enqueue(*tt.reply)
				}
				var err error
				if streaming {
					var stream *openai.ChatCompletionStream
					stream, err = client.CreateChatCompletionStream(ctxT(t), userRequest("hi"))
					if err == nil {
						stream.Close()
					}
				} else {
					_, err = client.CreateChatCompletion(ctxT(t), userRequest("hi"))
				}
				var apiErr *openai.APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("err = %T %v, want *openai.APIError", err, err)
				}
				// A well-formed OpenAI error body surfaces as *APIError, not
				// *RequestError (go-openai uses the latter only for bodies it
				// cannot parse).
				var reqErr *openai.RequestError
				if errors.As(err, &reqErr) {
					t.Errorf("err is also a *RequestError")
				}
				if apiErr.HTTPStatusCode != tt.wantCode || apiErr.Type != tt.wantType ||
					!strings.Contains(apiErr.Message, tt.wantMsg) {
					t.Errorf("APIError = %d %q %q", apiErr.HTTPStatusCode, apiErr.Type, apiErr.Message)
				}
				if tt.wantCode == 429 && apiErr.Code != "rate_limit_exceeded" {
					t.Errorf("429 code = %v", apiErr.Code)
				}
				if tt.wantCode == 401 && tt.key != "" {
					if apiErr.Code != "invalid_api_key" {
						t.Errorf("401 code = %v", apiErr.Code)
					}
					if strings.Contains(apiErr.Message, tt.key) {
						t.Errorf("401 message leaks the key: %q", apiErr.Message)
					}
				}
				if tt.wantCode == 401 && srv.Pending() != boolInt(tt.reply != nil) {
					t.Errorf("401 consumed a scripted reply")
				}
			})
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRetryAfterHeaders(t *testing.T) {
	tests := []struct {
		reply      openaitest.Reply
		wantSecs   string
		wantMillis string
	}{
		{openaitest.Reply{Status: 429}, "1", "1000"},
		{openaitest.Reply{Status: 429, RetryAfter: 1500 * time.Millisecond}, "2", "1500"},
		{openaitest.Reply{Status: 429, RetryAfter: 5 * time.Millisecond}, "1", "5"},
		{openaitest.Reply{Status: 500}, "", ""},
	}
	srv := openaitest.New()
	defer srv.Close()
	for _, tt := range tests {
		srv.Enqueue(tt.reply)
		body := `{"model":"m","messages":[{"role":"user","content":"x"}]}`
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.reply.Status || resp.Header.Get("Retry-After") != tt.wantSecs ||
			resp.Header.Get("Retry-After-Ms") != tt.wantMillis {
			t.Errorf("%+v: status %d, Retry-After %q, retry-after-ms %q", tt.reply, resp.StatusCode,
				resp.Header.Get("Retry-After"), resp.Header.Get("Retry-After-Ms"))
		}
	}
}

func TestRequestRecording(t *testing.T) {
	srv, client := start(t)
	srv.Enqueue(openaitest.Reply{Content: "both done"})
	tool := openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "read_file",
		Description: "Read a file",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}}
	req := openai.ChatCompletionRequest{
		Model: "gpt-4o",
		Tools: []openai.Tool{tool},
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "You are a worker."},
			{Role: openai.ChatMessageRoleUser, Content: "Read two files."},
			{Role: openai.ChatMessageRoleAssistant, ToolCalls: wantToolCalls(parallelCalls)},
			{Role: openai.ChatMessageRoleTool, ToolCallID: "call_read", Content: "package store"},
			{Role: openai.ChatMessageRoleTool, ToolCallID: "call_grep", Content: "store.go:12: func New("},
			{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{
				{Type: openai.ChatMessagePartTypeText, Text: "And "},
				{Type: openai.ChatMessagePartTypeText, Text: "summarise."},
			}},
		},
	}
	if _, err := client.CreateChatCompletion(ctxT(t), req); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests", len(reqs))
	}
	got := reqs[0]
	if got.Model != "gpt-4o" || got.Stream || got.IncludeUsage {
		t.Errorf("model/stream = %q %v %v", got.Model, got.Stream, got.IncludeUsage)
	}
	wantMsgs := []openaitest.Message{
		{Role: "system", Content: "You are a worker."},
		{Role: "user", Content: "Read two files."},
		{Role: "assistant", ToolCalls: parallelCalls},
		{Role: "tool", ToolCallID: "call_read", Content: "package store"},
		{Role: "tool", ToolCallID: "call_grep", Content: "store.go:12: func New("},
		{Role: "user", Content: "And summarise."},
	}
	if !reflect.DeepEqual(got.Messages, wantMsgs) {
		t.Errorf("messages =\n%+v\nwant\n%+v", got.Messages, wantMsgs)
	}
	if len(got.Tools) != 1 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "read_file" ||
		!strings.Contains(string(got.Tools[0].Function.Parameters), `"required":["path"]`) {
		t.Errorf("tools = %+v", got.Tools)
	}
	if got.Header.Get("Authorization") != "Bearer "+testKey || len(got.Body) == 0 {
		t.Errorf("header/body not recorded")
	}
	if got.LastMessage().Content != "And summarise." {
		t.Errorf("LastMessage = %+v", got.LastMessage())
	}

	// A streamed request is recorded with its stream options.
	srv.Enqueue(openaitest.Reply{Content: "x"})
	sreq := userRequest("stream me")
	sreq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := client.CreateChatCompletionStream(ctxT(t), sreq)
	if err != nil {
		t.Fatal(err)
	}
	readStream(t, stream)
	stream.Close()
	if reqs := srv.Requests(); len(reqs) != 2 || !reqs[1].Stream || !reqs[1].IncludeUsage {
		t.Errorf("stream request recorded as %+v", reqs[len(reqs)-1])
	}
}

func TestInvalidRequests(t *testing.T) {
	assistant := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: wantToolCalls(parallelCalls)}
	user := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "hi"}
	toolMsg := func(id string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: "result"}
	}
	tests := []struct {
		name      string
		req       openai.ChatCompletionRequest
		wantParam string
		wantMsg   string
	}{
		{
			name:      "tool message without tool_calls",
			req:       openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user, toolMsg("call_read")}},
			wantParam: "messages.[1].role",
			wantMsg:   "must be a response to a preceeding message with 'tool_calls'",
		},
		{
			name:      "missing tool result",
			req:       openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user, assistant, toolMsg("call_read"), user}},
			wantParam: "messages.[1].role",
			wantMsg:   "did not have response messages: call_grep",
		},
		{
			name:      "unknown tool_call_id",
			req:       openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user, assistant, toolMsg("call_read"), toolMsg("call_other")}},
			wantParam: "messages.[3].role",
			wantMsg:   "must be a response to a preceeding message",
		},
		{
			name: "stream_options without stream",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user},
				StreamOptions: &openai.StreamOptions{IncludeUsage: true}},
			wantParam: "stream_options",
			wantMsg:   "only allowed when 'stream' is enabled",
		},
		{
			name: "bad tool name",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user},
				Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read file"}}}},
			wantParam: "tools[0].function.name",
			wantMsg:   "does not match pattern",
		},
		{
			name: "tool call echoed without type",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user,
				{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "f", Arguments: "{}"}}}},
				toolMsg("c1")}},
			wantParam: "messages.[1].tool_calls.[0].type",
			wantMsg:   "Invalid value: ''",
		},
		{
			name: "tool call echoed with empty arguments",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user,
				{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "f"}}}},
				toolMsg("c1")}},
			wantParam: "messages.[1].tool_calls.[0].function.arguments",
			wantMsg:   "Missing required parameter",
		},
		{
			name: "unknown response_format type",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user},
				ResponseFormat: &openai.ChatCompletionResponseFormat{Type: "yaml"}},
			wantParam: "response_format.type",
			wantMsg:   "Supported values are: 'json_object', 'json_schema', and 'text'",
		},
		{
			name: "json_object without the word json",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user},
				ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}},
			wantParam: "messages",
			wantMsg:   "must contain the word 'json'",
		},
		{
			name: "json_schema without json_schema",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user},
				ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema}},
			wantParam: "response_format.json_schema",
			wantMsg:   "Missing required parameter",
		},
		{
			name: "json_schema with a bad name",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user},
				ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
					JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "angle result", Schema: json.RawMessage(`{"type":"object"}`)}}},
			wantParam: "response_format.json_schema.name",
			wantMsg:   "does not match pattern",
		},
		{
			name: "json_schema whose schema is not an object",
			req: openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{user},
				ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
					JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "r", Schema: json.RawMessage(`[1]`)}}},
			wantParam: "response_format.json_schema.schema",
			wantMsg:   "expected an object, but got an array",
		},
		{
			name:    "no messages",
			req:     openai.ChatCompletionRequest{Model: "m"},
			wantMsg: "empty array",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := start(t)
			srv.Enqueue(openaitest.Reply{Content: "unused"})
			_, err := client.CreateChatCompletion(ctxT(t), tt.req)
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v", err)
			}
			if apiErr.HTTPStatusCode != 400 || apiErr.Type != "invalid_request_error" || !strings.Contains(apiErr.Message, tt.wantMsg) {
				t.Errorf("APIError = %d %q %q", apiErr.HTTPStatusCode, apiErr.Type, apiErr.Message)
			}
			if tt.wantParam != "" && (apiErr.Param == nil || *apiErr.Param != tt.wantParam) {
				t.Errorf("param = %v, want %q", apiErr.Param, tt.wantParam)
			}
			if srv.Pending() != 1 {
				t.Errorf("an invalid request consumed a scripted reply")
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("invalid request not recorded")
			}
		})
	}
}

// A json_schema response format is accepted and recorded decoded; the
// script still decides the answer.
func TestResponseFormatRecorded(t *testing.T) {
	srv, client := start(t)
	srv.Enqueue(openaitest.Reply{Content: `{"ok":true}`})
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
	resp, err := client.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "answer"}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "Result_1", Schema: schema, Strict: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != `{"ok":true}` {
		t.Errorf("content = %q", resp.Choices[0].Message.Content)
	}
	rf := srv.Requests()[0].ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.Name != "Result_1" || !rf.Strict || string(rf.Schema) != string(schema) {
		t.Errorf("recorded format = %+v", rf)
	}
}

func TestCancellation(t *testing.T) {
	tests := []struct {
		name   string
		reply  openaitest.Reply
		stream bool
	}{
		{name: "delay before first byte", reply: openaitest.Reply{Content: "late", Delay: time.Hour}},
		{name: "delay before first byte/stream", reply: openaitest.Reply{Content: "late", Delay: time.Hour}, stream: true},
		{name: "delay between chunks", reply: openaitest.Reply{Content: "one two three", ChunkDelay: time.Hour}, stream: true},
		{name: "slow error", reply: openaitest.Reply{Status: 429, Delay: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := start(t)
			srv.Enqueue(tt.reply)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			var err error
			if !tt.stream {
				_, err = client.CreateChatCompletion(ctx, userRequest("hi"))
			} else {
				var stream *openai.ChatCompletionStream
				stream, err = client.CreateChatCompletionStream(ctx, userRequest("hi"))
				if err == nil {
					defer stream.Close()
					for err == nil {
						_, err = stream.Recv()
					}
				}
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
		})
	}
}

// TestCloseAbortsInflight: Close must not wait for a scripted delay, and a
// stream cut by Close must not look complete to the client.
func TestCloseAbortsInflight(t *testing.T) {
	srv := openaitest.New()
	client := newClient(t, srv, "")
	srv.Enqueue(openaitest.Reply{Content: "one two three", ChunkDelay: time.Hour})
	stream, err := client.CreateChatCompletionStream(ctxT(t), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	for err == nil {
		_, err = stream.Recv()
	}
	if errors.Is(err, io.EOF) {
		t.Errorf("stream cut by Close ended with a clean io.EOF")
	}
}

func TestHandle(t *testing.T) {
	srv, client := start(t)
	srv.Enqueue(openaitest.Reply{Content: "from queue"})
	var mu sync.Mutex
	seen := 0
	srv.Handle(func(req openaitest.Request) openaitest.Reply {
		mu.Lock()
		seen++
		mu.Unlock()
		last := req.LastMessage()
		switch {
		case last.Role == "tool":
			return openaitest.Reply{Content: "tool said: " + last.Content}
		case strings.Contains(last.Content, "fail"):
			return openaitest.Reply{Status: 500}
		default:
			return openaitest.Reply{Content: "echo: " + last.Content + " via " + req.Model}
		}
	})
	tests := []struct {
		msgs    []openai.ChatCompletionMessage
		want    string
		wantErr bool
	}{
		{msgs: []openai.ChatCompletionMessage{{Role: "user", Content: "ping"}}, want: "echo: ping via gpt-4o-mini"},
		{msgs: []openai.ChatCompletionMessage{
			{Role: "user", Content: "x"},
			{Role: "assistant", ToolCalls: wantToolCalls(parallelCalls[:1])},
			{Role: "tool", ToolCallID: "call_read", Content: "42"},
		}, want: "tool said: 42"},
		{msgs: []openai.ChatCompletionMessage{{Role: "user", Content: "please fail"}}, wantErr: true},
	}
	for _, tt := range tests {
		resp, err := client.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: openai.GPT4oMini, Messages: tt.msgs})
		if tt.wantErr {
			if err == nil {
				t.Errorf("want error")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if resp.Choices[0].Message.Content != tt.want {
			t.Errorf("content = %q, want %q", resp.Choices[0].Message.Content, tt.want)
		}
	}
	if seen != len(tests) || srv.Pending() != 1 {
		t.Errorf("handler saw %d requests, queue has %d", seen, srv.Pending())
	}
	srv.Handle(nil)
	resp, err := client.CreateChatCompletion(ctxT(t), userRequest("again"))
	if err != nil || resp.Choices[0].Message.Content != "from queue" {
		t.Errorf("after Handle(nil): %v %+v", err, resp.Choices)
	}
}

func TestConcurrentQueue(t *testing.T) {
	srv, client := start(t)
	const n = 16
	for range n {
		srv.Enqueue(openaitest.Reply{Content: "reply text here", ToolCalls: parallelCalls[:1]})
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				_, err := client.CreateChatCompletion(ctxT(t), userRequest("hi"))
				errs <- err
				return
			}
			stream, err := client.CreateChatCompletionStream(ctxT(t), userRequest("hi"))
			if err == nil {
				for err == nil {
					_, err = stream.Recv()
				}
				stream.Close()
				if errors.Is(err, io.EOF) {
					err = nil
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if srv.Pending() != 0 || len(srv.Requests()) != n {
		t.Errorf("pending %d, recorded %d", srv.Pending(), len(srv.Requests()))
	}
}

func TestModels(t *testing.T) {
	srv, client := start(t, openaitest.WithModel("pm-fake-1"))
	list, err := client.ListModels(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Models) != 1 || list.Models[0].ID != "pm-fake-1" || list.Models[0].Object != "model" {
		t.Errorf("models = %+v", list.Models)
	}
	m, err := client.GetModel(ctxT(t), "pm-fake-1")
	if err != nil || m.ID != "pm-fake-1" {
		t.Errorf("GetModel = %+v, %v", m, err)
	}
	_, err = client.GetModel(ctxT(t), "nope")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 {
		t.Errorf("GetModel(nope) err = %v", err)
	}
	hreq, _ := http.NewRequest("GET", srv.URL+"/v1/embeddings", nil)
	hreq.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown route status = %d", resp.StatusCode)
	}
}

const demoScript = `[
  {"content": "Let me look.", "chunk_delay": "1ms",
   "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "go.mod"}},
                  {"name": "list_dir", "arguments": "{\"dir\":\".\"}"}]},
  {"status": 429, "retry_after": "10ms", "error_message": "slow down"},
  {"content": "Done.", "delay": "1ms", "usage": {"prompt_tokens": 120, "completion_tokens": 3}}
]`

func TestLoadScript(t *testing.T) {
	script, err := openaitest.LoadScript(strings.NewReader(demoScript))
	if err != nil {
		t.Fatal(err)
	}
	want := []openaitest.Reply{
		{Content: "Let me look.", ChunkDelay: time.Millisecond, ToolCalls: []openaitest.ToolCall{
			{ID: "call_1", Name: "read_file", Arguments: `{"path":"go.mod"}`},
			{Name: "list_dir", Arguments: `{"dir":"."}`},
		}},
		{Status: 429, RetryAfter: 10 * time.Millisecond, ErrorMessage: "slow down"},
		{Content: "Done.", Delay: time.Millisecond, Usage: &openaitest.Usage{PromptTokens: 120, CompletionTokens: 3}},
	}
	if !reflect.DeepEqual(script, want) {
		t.Errorf("script =\n%+v\nwant\n%+v", script, want)
	}

	for _, bad := range []string{
		`[{"contnet": "typo"}]`,
		`[{"delay": "soon"}]`,
		`[{"tool_calls": [{"arguments": {}}]}]`,
		`{"content": "not an array"}`,
		`[] []`,
	} {
		if _, err := openaitest.LoadScript(strings.NewReader(bad)); err == nil {
			t.Errorf("LoadScript(%s) succeeded", bad)
		}
	}
}

func TestListenAndServeReplay(t *testing.T) {
	script, err := openaitest.LoadScript(strings.NewReader(demoScript))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := openaitest.ListenAndServe("127.0.0.1:0", script, openaitest.WithAPIKey(testKey))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := openaitest.ListenAndServe(strings.TrimPrefix(srv.URL, "http://"), nil); err == nil {
		t.Errorf("second ListenAndServe on a busy address succeeded")
	}
	client := newClient(t, srv, testKey)

	stream, err := client.CreateChatCompletionStream(ctxT(t), userRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	got := readStream(t, stream)
	stream.Close()
	if got.content != "Let me look." || len(got.toolCalls) != 2 || got.toolCalls[0].Function.Arguments != `{"path":"go.mod"}` ||
		!strings.HasPrefix(got.toolCalls[1].ID, "call_") || got.toolCalls[1].Function.Name != "list_dir" {
		t.Errorf("turn 1 = %+v", got)
	}

	next := openai.ChatCompletionRequest{Model: openai.GPT4oMini, Messages: []openai.ChatCompletionMessage{
		{Role: "user", Content: "go"},
		{Role: "assistant", Content: got.content, ToolCalls: got.toolCalls},
		{Role: "tool", ToolCallID: got.toolCalls[0].ID, Content: "module x"},
		{Role: "tool", ToolCallID: got.toolCalls[1].ID, Content: "go.mod"},
	}}
	_, err = client.CreateChatCompletion(ctxT(t), next)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Message != "slow down" {
		t.Fatalf("turn 2 err = %v", err)
	}
	resp, err := client.CreateChatCompletion(ctxT(t), next)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Done." || resp.Usage.TotalTokens != 123 {
		t.Errorf("turn 3 = %+v", resp)
	}
	if srv.Pending() != 0 {
		t.Errorf("script not consumed")
	}
}

func TestEmptyArgumentsBecomeObject(t *testing.T) {
	srv, client := start(t)
	script := []openaitest.Reply{{ToolCalls: []openaitest.ToolCall{{Name: "list"}}}}
	srv.Enqueue(script...)
	resp, err := client.CreateChatCompletion(ctxT(t), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].Message.ToolCalls
	if len(tc) != 1 || tc[0].Function.Arguments != "{}" || tc[0].ID == "" {
		t.Errorf("tool calls = %+v", tc)
	}
	if script[0].ToolCalls[0].ID != "" || script[0].ToolCalls[0].Arguments != "" {
		t.Errorf("server modified the caller's script: %+v", script[0].ToolCalls[0])
	}
}

// TestSSEReadableLineByLine guards the framing go-openai relies on: it reads
// with bufio.Reader.ReadBytes('\n') and counts non-"data:" lines as "empty
// messages", so every event is one data line followed by one blank line.
func TestSSEReadableLineByLine(t *testing.T) {
	srv := openaitest.New()
	defer srv.Close()
	srv.Enqueue(openaitest.Reply{Content: strings.Repeat("word ", 200), ToolCalls: parallelCalls})
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	line := 0
	for sc.Scan() {
		text := sc.Text()
		if line%2 == 0 && !strings.HasPrefix(text, "data: ") {
			t.Fatalf("line %d = %q, want a data line", line, text)
		}
		if line%2 == 1 && text != "" {
			t.Fatalf("line %d = %q, want blank", line, text)
		}
		line++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
