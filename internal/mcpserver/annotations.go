package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// hints are the MCP annotations of every tool, in one table: a client
// shows them (kill_task asks before it runs; task_status does not).
// TestEveryToolAnnotated fails for a tool added without its row.
var hints = map[string]*mcp.ToolAnnotations{
	// Read-only: they change nothing pm keeps.
	"task_status":          readOnly("Task status"),
	"chat":                 readOnly("Read a phase"),
	"wait_task":            readOnly("Wait for a task"),
	"designs":              readOnly("List code designs"),
	"list_prompt_objects":  readOnly("List prompt objects"),
	"get_conversation":     readOnly("A prompt object's conversation"),
	"inspect_po":           readOnly("Inspect a prompt object"),
	"get_pending_requests": readOnly("Pending requests"),
	"costs":                readOnly("Costs against budgets"),
	"task_diff":            readOnly("A task's changes"),
	// Additive: they add a record and take nothing away.
	"say":                additive("Post to a phase", false),
	"respond_to_request": additive("Answer a request", false),
	"create_task":        additive("Create a task", true), // its agents call models
	"create_subtask":     additive("Create a subtask", true),
	"send_message":       additive("Message a prompt object", true),
	// Destructive: they end work or rewrite a file.
	"end_phase": destructive("End a phase early", false, false),
	"kill_task": destructive("Kill a task", true, false),
	// merge_task writes the merged files into the checkout; reject_task
	// starts the owner again (it calls models).
	"merge_task":  destructive("Merge a task", false, false),
	"reject_task": destructive("Reject a task's work", false, true),
	"design":      destructive("Design a file", false, true), // rewrites the file; calls models
}

func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

func additive(title string, openWorld bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(false), OpenWorldHint: ptr(openWorld)}
}

func destructive(title string, idempotent, openWorld bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(true), IdempotentHint: idempotent, OpenWorldHint: ptr(openWorld)}
}

func ptr[T any](v T) *T { return &v }
