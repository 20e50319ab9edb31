// Package anthropictest is a fake Anthropic Messages API server for tests:
// it listens on a real TCP socket and speaks the wire protocol, so a real
// agent CLI (Claude Code, pointed at it with ANTHROPIC_BASE_URL) talks to it
// unmodified and runs the tools it is told to.
//
//	srv := anthropictest.New(anthropictest.WithAPIKey("sk-ant-test"))
//	defer srv.Close()
//	srv.Script(", owner of task", anthropictest.Bash("pm phase Talk --limit 3 --roles designer"), ...)
//
// # Conversations
//
// Each Script is one agent's side of a conversation, chosen by a string its
// first user message contains (the rendered prompt names the agent's role).
// The reply to a request is the script's turn number N, where N is how many
// assistant messages the request already holds: the server keeps no state
// per conversation, so a retried request gets the same answer and a resumed
// conversation (claude --resume) goes on where it stopped. Past its last turn,
// or for a request no script matches (a CLI's side requests: titles, topic
// checks), the reply is a short text that ends the turn.
//
// # Faithful
//
//   - POST /v1/messages (query ignored, so ?beta=true works), with the key in
//     x-api-key or Authorization: Bearer (401 authentication_error when a key
//     is set and does not match).
//   - "stream": true: Content-Type text/event-stream; "event: NAME" and
//     "data: JSON" lines and a blank line per event, flushed as written:
//     message_start (the message with empty content and usage), ping, per
//     block content_block_start, content_block_delta (text_delta word by
//     word; input_json_delta in pieces) and content_block_stop, then
//     message_delta (stop_reason end_turn or tool_use, and usage) and
//     message_stop.
//   - Without stream: one "message" object with the same blocks and usage.
//   - The API's conversation checks (400 invalid_request_error, its
//     messages): roles user, assistant and system only (Claude Code 2.1
//     sends system messages between the others: passed over), the first a
//     user's, each
//     tool_use answered by a tool_result in the next message, each
//     tool_result answering a tool_use of the message before it (a
//     conversation cut before a tool result is refused, as there). Messages
//     of one role in a row pass: the API joins them.
//   - POST /v1/messages/count_tokens: {"input_tokens": N}.
//   - Anything else: 404 with the API's error object
//     {"type":"error","error":{"type":"not_found_error","message":...}}.
//
// Invariants: the server never blocks on a request (no scripted reply is
// waited for); Requests returns every /v1/messages request decoded, in order.
package anthropictest
