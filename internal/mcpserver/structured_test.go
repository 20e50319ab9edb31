package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/store"
)

// Results come as structured content beside the text (issue 25): the same
// JSON object, and where the tool lists an output schema, one that the
// result validates against.
func TestStructuredResults(t *testing.T) {
	sess := newSession(t)
	ctx := context.Background()
	tk, err := ops.CreateTask(ctx, sess, ops.TaskInput{Description: "build it"})
	if err != nil {
		t.Fatal(err)
	}
	rq, err := request.Create(sess.Store, sess.State, store.Actor{Name: "echo"}, "Proceed?")
	if err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, sess, ToolsAll, nil)
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]any{}
	for _, tl := range list.Tools {
		schemas[tl.Name] = tl.OutputSchema
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"task_status", map[string]any{"task": tk.ID}},
		{"create_task", map[string]any{"description": "write docs"}},
		{"get_pending_requests", nil},
		{"respond_to_request", map[string]any{"request_id": rq.ID, "response": "Yes"}},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", c.tool, err, text(res.Content))
		}
		var fromText, structured map[string]any
		if err := json.Unmarshal([]byte(text(res.Content)), &fromText); err != nil {
			t.Fatalf("%s: text is not a JSON object: %v", c.tool, err)
		}
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil || json.Unmarshal(raw, &structured) != nil || structured == nil {
			t.Fatalf("%s: no structured content (%v): %s", c.tool, err, raw)
		}
		a, _ := json.Marshal(fromText)
		b, _ := json.Marshal(structured)
		if string(a) != string(b) {
			t.Fatalf("%s: structured content differs from the text\n%s\n%s", c.tool, b, a)
		}
		if sc := schemas[c.tool]; sc != nil {
			data, _ := json.Marshal(sc)
			var schema jsonschema.Schema
			if err := json.Unmarshal(data, &schema); err != nil {
				t.Fatal(err)
			}
			resolved, err := schema.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := resolved.Validate(structured); err != nil {
				t.Fatalf("%s: result does not fit its output schema: %v", c.tool, err)
			}
		}
	}
}
