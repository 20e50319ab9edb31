// Package mcpserver is pm as a Model Context Protocol server (`pm mcp`),
// built on the official github.com/modelcontextprotocol/go-sdk.
//
// It offers the prompt-object tools of the PromptObjects MCP contract
// (list_prompt_objects, send_message, get_conversation, inspect_po,
// get_pending_requests, respond_to_request) and pm's task and room tools
// (create_task, create_subtask, task_status, say, chat, end_phase, kill_task, wait_task, task_diff, merge_task, reject_task),
// the code designer (design, designs: pm design and pm designs; a design
// writes its file back only with apply=true, there being no terminal to ask),
// the built-in flows as prompts (prompts.go: start_task, landing_page, review_task,
// needs_me, talk_to; each offered only with the tools its message names),
// resources for prompt objects, the bus, tasks and phases, and
// notifications/resources/updated for subscribed resources.
//
// Invariants:
//   - every tool and resource calls one internal/ops operation as the
//     session's actor (the human, or the agent PM_AGENT names, with every
//     identity check of ops); this package holds no operation of its own,
//     only the mapping of MCP names and shapes onto ops inputs and results;
//   - a result is its JSON as text and, when an object, the same JSON as
//     structuredContent; an outputSchema (ops.SchemaFor of the result type)
//     is listed only when under maxOutputSchema bytes, so the tool list
//     stays cheap for a model (TestToolListCost, TestStructuredResults);
//   - input schemas are derived from the input structs by ops.SchemaFor
//     (github.com/google/jsonschema-go), never written by hand; where the
//     contract's parameter names differ from ops (po_name vs po) a thin
//     input struct here carries the contract's names and maps onto the ops
//     input;
//   - an operation's error is a tool error (isError) whose text is what a
//     model reads from pm's own tools (capability.Describe: the error class,
//     the message, and its Try: hint), never a crash or a protocol error;
//   - resource updates are driven by the bus (one Subscribe from its end
//     cursor per server), never by polling; the SDK sends them only to the
//     sessions subscribed to the URI;
//   - requests are served concurrently (the SDK runs each call on its own
//     goroutine), so respond_to_request completes while a send_message
//     waits for the prompt object that asked;
//   - with Elicit, an agent's question (request.asked on the bus) is put to
//     the user of the first client that supports elicitation and answered
//     through ops.Answer with what they accept; otherwise it stays pending;
//   - over HTTP every request carries the bearer token and, when a browser
//     sends an Origin, it is a loopback one.
package mcpserver
