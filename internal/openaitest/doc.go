// Package openaitest is a fake OpenAI Chat Completions server for tests and
// for offline demos. It listens on a real TCP socket and speaks the wire
// protocol, so the real github.com/sashabaranov/go-openai client talks to it
// unmodified:
//
//	srv := openaitest.New(openaitest.WithAPIKey("sk-test"))
//	defer srv.Close()
//	srv.Enqueue(
//		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "read_file", Arguments: `{"path":"go.mod"}`}}},
//		openaitest.Reply{Content: "It is a Go module."},
//	)
//	cfg := openai.DefaultConfig("sk-test")
//	cfg.BaseURL = srv.URL + "/v1" // or srv.BaseURL()
//	client := openai.NewClientWithConfig(cfg)
//
// Each chat completion request consumes one scripted Reply (FIFO), or, when
// a function is set with Handle, gets the Reply that function computes from
// the decoded Request. With neither left the server answers 500
// "openaitest: no scripted reply left" rather than hang. Requests returns
// every request received, decoded (messages with tool calls and
// tool_call_id, tools, stream flags, headers and raw body).
//
// For an offline demo, LoadScript reads a JSON script and ListenAndServe
// serves it on a chosen address until Close.
//
// # Faithful
//
//   - Endpoints: POST /v1/chat/completions, GET /v1/models and
//     GET /v1/models/{model}; anything else is a 404 "Invalid URL" error.
//   - Non-streaming responses: a "chat.completion" object with id, object,
//     created, model (echoing the request), one choice whose message has
//     role, content (null when the turn is only tool calls), refusal,
//     tool_calls [{id, type "function", function {name, arguments}}] and
//     annotations, finish_reason "stop" or "tool_calls", and usage with its
//     details objects.
//   - Streaming ("stream": true): Content-Type text/event-stream, one
//     "data: <chat.completion.chunk>" line and a blank line per event, each
//     flushed as written. The first delta has role "assistant"; content
//     arrives word by word (never split inside a UTF-8 sequence); each tool
//     call opens with a delta carrying its index, id, type and name with
//     empty arguments, then its arguments arrive as JSON fragments in
//     deltas carrying only the index; a final chunk with an empty delta
//     holds finish_reason. With stream_options.include_usage every chunk has
//     "usage": null and an extra last chunk has "choices": [] and the usage.
//     The stream ends with "data: [DONE]".
//   - Errors are {"error": {"message", "type", "param", "code"}} bodies with
//     the real types and codes: 429 is type "requests", code
//     "rate_limit_exceeded", with Retry-After (seconds) and retry-after-ms
//     headers; 5xx is "server_error"; a missing or wrong bearer key (when
//     WithAPIKey is set) is 401 "invalid_request_error" / "invalid_api_key",
//     checked before anything else and consuming no reply. go-openai turns
//     all of them into *openai.APIError with HTTPStatusCode set.
//   - Request validation that agent loops trip over, answered 400
//     "invalid_request_error" with the real messages and param paths:
//     missing model, empty messages, unknown role, stream_options without
//     stream, tool definitions that are not "function" or have invalid
//     names, assistant tool calls lacking id, type "function", name or
//     arguments, a "tool" message that does not answer a pending tool call
//     of the preceding assistant message, an assistant message whose
//     tool calls are not all answered before the next other message, and a
//     response_format that is not text, json_object (which needs the word
//     "json" in the messages) or json_schema (which needs a valid name and
//     an object schema). The decoded format is in Request.ResponseFormat.
//     Invalid requests are recorded but consume no reply.
//   - Delays (Reply.Delay before the first byte, Reply.ChunkDelay between
//     chunks) end as soon as the client cancels the request. A stream cut
//     short by cancellation or Close is aborted at the TCP level, so the
//     client sees an unexpected EOF rather than a clean end without [DONE].
//
// # Simplified
//
//   - One choice whatever "n" is; sampling parameters, max_tokens, stop,
//     tool_choice and parallel_tool_calls are recorded in the raw body but
//     have no effect, and a response_format is checked but never enforced
//     on the answer: the script decides the answer (a test can script a
//     reply that breaks the schema, as real models sometimes do).
//   - Token usage is estimated at about four characters a token unless the
//     Reply sets it; there is no tokenizer and no context-length limit.
//     Nothing is cached unless a Reply's Usage says so (CachedTokens, sent
//     as prompt_tokens_details.cached_tokens, a part of prompt_tokens).
//   - Chunking is deterministic: words for content, a few characters for
//     arguments, not real tokens; there are no logprobs, refusals,
//     reasoning, audio or annotation contents, and no errors in the middle
//     of a stream.
//   - The model is echoed, never checked; ids, request ids and the system
//     fingerprint are synthetic; there are no x-ratelimit-* headers.
//   - Error messages follow the real API's wording where known but are not
//     guaranteed to match it byte for byte.
package openaitest
