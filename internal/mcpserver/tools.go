package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/ops"
)

// opCall is an operation as a tool sees it: typed input, a result that is
// sent as JSON text, and the MCP request for progress.
type opCall[In, Out any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error)

// addTool registers a tool whose input schema is derived from In by
// ops.SchemaFor. The result is one JSON text block (no output schema: it
// would double what tools/list costs a model); an error is a tool error
// with the words pm's own model tools use.
func addTool[In, Out any](s *mcp.Server, name, desc string, fn opCall[In, Out]) {
	t := &mcp.Tool{Name: name, Description: desc, InputSchema: ops.SchemaFor[In](), Annotations: hints[name], OutputSchema: outputSchema[Out]()}
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		out, err := fn(ctx, req, in)
		if err != nil {
			return toolError(err), nil, nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return toolError(err), nil, nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}
		if len(data) > 0 && data[0] == '{' {
			// The same JSON as structured content, for clients that read
			// results as data; the text stays for those that do not.
			res.StructuredContent = json.RawMessage(data)
		}
		return res, nil, nil
	})
}

// maxOutputSchema bounds an output schema pm lists (bytes of JSON): a tool
// list is read by a model on every turn, and a big result type's schema
// (a task's whole view) would cost more than the tool it describes. Tools
// whose schema is larger return structured content without one, as the
// protocol allows.
const maxOutputSchema = 400

// outputSchema is Out's JSON Schema when Out is an object whose schema is
// small, else nil.
func outputSchema[Out any]() any {
	var schema json.RawMessage
	func() {
		defer func() { _ = recover() }() // a type with no schema: none listed
		schema = ops.SchemaFor[Out]()
	}()
	var probe struct {
		Type string `json:"type"`
	}
	if len(schema) == 0 || len(schema) > maxOutputSchema || json.Unmarshal(schema, &probe) != nil || probe.Type != "object" {
		return nil
	}
	return schema
}

// toolError is err as a tool error: "not found: no request rq-ffffff" and
// its Try: line, as capability.Describe renders it for pm's models.
func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: capability.Describe(err)}}}
}

// op adapts an operation that needs no MCP request.
func op[In, Out any](sess *ops.Session, f func(context.Context, *ops.Session, In) (Out, error)) opCall[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (Out, error) { return f(ctx, sess, in) }
}

func (s *Server) addTaskTools(withRequests bool) {
	addTool(s.MCP, "create_task", "Create a task; its owner agent starts (pm task), on the worker named by on if given.", op(s.sess, ops.CreateTask))
	addTool(s.MCP, "create_subtask", "Create a subtask with its own owner (pm subtask).", op(s.sess, ops.Subtask))
	addTool(s.MCP, "task_status", "A task with its phases and agents, or all live tasks (pm status).", op(s.sess, ops.Status))
	addTool(s.MCP, "say", "Post to a discussion phase (pm say).", op(s.sess, ops.Say))
	addTool(s.MCP, "chat", "Read a phase's messages; wait=true blocks for new ones (pm chat).", op(s.sess, ops.Chat))
	addTool(s.MCP, "end_phase", "Close a task's active phase early (pm end-phase).", op(s.sess, ops.EndPhase))
	addTool(s.MCP, "kill_task", "Kill a task's agents and subtasks; restart=true starts a fresh owner (pm kill).", op(s.sess, ops.Kill))
	addTool(s.MCP, "wait_task", "Block until a task is done, killed or stalled (pm wait).", op(s.sess, ops.Wait))
	addTool(s.MCP, "costs", "Dollars spent, against the budgets (pm costs).", op(s.sess, ops.Spend))
	addTool(s.MCP, "task_diff", "A task's changes (pm diff).", op(s.sess, ops.TaskDiff))
	addTool(s.MCP, "merge_task", "Merge a waiting task (pm merge).", op(s.sess, ops.MergeTask))
	addTool(s.MCP, "reject_task", "Send a task's work back with why (pm reject).", op(s.sess, ops.RejectTask))
	if withRequests {
		s.addRequestTools()
	}
}
