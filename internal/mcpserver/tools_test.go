package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
)

var (
	poTools   = []string{"get_conversation", "get_pending_requests", "inspect_po", "list_prompt_objects", "respond_to_request", "send_message"}
	taskTools = []string{"chat", "costs", "create_subtask", "create_task", "design", "designs", "end_phase", "get_pending_requests", "kill_task", "merge_task", "reject_task", "respond_to_request", "say", "task_diff", "task_status", "wait_task"}
)

// withOutputSchema are the tools whose result schema is small enough to list
// (maxOutputSchema); every other object result is structured content alone.
var withOutputSchema = []string{"get_conversation", "respond_to_request", "send_message"}

// Each --tools set lists exactly its tools, each with a description and a
// schema whose required arguments are the contract's.
func TestToolSets(t *testing.T) {
	all := slices.Concat(poTools, taskTools)
	slices.Sort(all)
	all = slices.Compact(all)
	tests := []struct {
		set  ToolSet
		want []string
	}{{ToolsPO, poTools}, {ToolsTasks, taskTools}, {ToolsAll, all}}
	for _, tt := range tests {
		t.Run(string(tt.set), func(t *testing.T) {
			_, cs := connect(t, newSession(t), tt.set, nil)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				if tl.Description == "" || (tl.OutputSchema != nil) != slices.Contains(withOutputSchema, tl.Name) {
					t.Errorf("%s: description %q, output schema %v", tl.Name, tl.Description, tl.OutputSchema)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Errorf("tools %v, want %v", names, tt.want)
			}
		})
	}
}

// Every tool carries annotations (kill_task destructive, task_status
// read-only), and every row of the table names a tool.
func TestEveryToolAnnotated(t *testing.T) {
	_, cs := connect(t, newSession(t), ToolsAll, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range res.Tools {
		listed[tl.Name] = true
		a := tl.Annotations
		switch {
		case a == nil || a.Title == "":
			t.Errorf("%s: no annotations", tl.Name)
		case a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint:
			t.Errorf("%s: read-only and destructive", tl.Name)
		case !a.ReadOnlyHint && a.DestructiveHint == nil:
			t.Errorf("%s: writes, and says nothing of destroying (a client assumes it destroys)", tl.Name)
		}
	}
	for name := range hints {
		if !listed[name] {
			t.Errorf("hints names %s, which is no tool", name)
		}
	}
	for _, name := range []string{"kill_task", "end_phase"} {
		if a := hints[name]; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
			t.Errorf("%s is not marked destructive", name)
		}
	}
}

func TestToolSchemas(t *testing.T) {
	_, cs := connect(t, newSession(t), ToolsAll, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	required := map[string][]string{
		"send_message": {"po_name", "message"}, "get_conversation": {"po_name"}, "inspect_po": {"po_name"},
		"respond_to_request": {"request_id", "response"}, "get_pending_requests": nil, "list_prompt_objects": nil,
		"create_task": {"description"}, "say": {"message"}, "kill_task": {"task"}, "wait_task": {"task"},
		"design": nil, "designs": nil, "task_diff": {"task"}, "merge_task": {"task"}, "reject_task": {"task", "why"},
	}
	for _, tl := range res.Tools {
		want, ok := required[tl.Name]
		if !ok {
			continue
		}
		sch := tl.InputSchema.(map[string]any)
		var got []string
		if r, ok := sch["required"].([]any); ok {
			for _, x := range r {
				got = append(got, x.(string))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s required %v, want %v", tl.Name, got, want)
		}
	}
}

func TestParseToolSet(t *testing.T) {
	for in, want := range map[string]ToolSet{"": ToolsAll, "po": ToolsPO, "tasks": ToolsTasks, "all": ToolsAll} {
		if got, err := ParseToolSet(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseToolSet("some"); err == nil || !strings.Contains(err.Error(), "unknown tool set") {
		t.Errorf("bad set: %v", err)
	}
}

// Every tool answers a good call with the operation's result and a bad one
// with a tool error in pm's words and its Try: hint.
func TestTools(t *testing.T) {
	sess := newSession(t)
	s := sess.Store
	ctx := context.Background()
	tr := transcript.Of(sess.State, "echo")
	if err := tr.Append(openai.ChatCompletionMessage{Role: "user", Content: "hi"}, openai.ChatCompletionMessage{Role: "assistant", Content: "hi!"},
		openai.ChatCompletionMessage{Role: "user", Content: "bye"}); err != nil {
		t.Fatal(err)
	}
	rq, err := request.Create(s, fsstate.New(s), store.Actor{Name: "echo"}, "Proceed?")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := ops.CreateTask(ctx, sess, ops.TaskInput{Description: "build it"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := ops.CreateTask(ctx, sess, ops.TaskInput{Description: "to kill"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.OpenPhase(ctx, sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 5, Roles: []string{"designer"}}); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, sess, ToolsAll, nil)
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr bool
		want    []string
	}{
		{"list", "list_prompt_objects", nil, false, []string{`"name":"echo"`, `"state":"idle"`, `"capabilities":["think","read_file","greeter"]`}},
		{"inspect", "inspect_po", map[string]any{"po_name": "echo"}, false, []string{`"universal":["ask_human","create_capability","think"]`,
			`"primitives":["read_file"]`, `"delegates":["greeter"]`, `"prompt_body":"# Echo\n\nYou echo.\n"`, `"history_length":3`, `"runtime":"none"`}},
		{"inspect unknown", "inspect_po", map[string]any{"po_name": "nope"}, true, []string{`not found: no prompt object "nope"`, "\nTry: known prompt objects:"}},
		{"inspect missing arg", "inspect_po", map[string]any{}, true, []string{"po_name"}},
		{"conversation", "get_conversation", map[string]any{"po_name": "echo"}, false, []string{`"message_count":3`, `{"role":"assistant","content":"hi!"}`}},
		{"conversation limit", "get_conversation", map[string]any{"po_name": "echo", "limit": 1}, false, []string{`"message_count":3,"history":[{"role":"user","content":"bye"}]`}},
		{"conversation bad limit", "get_conversation", map[string]any{"po_name": "echo", "limit": -2}, true, []string{"bad arguments: bad limit -2", "Try: "}},
		{"conversation unknown", "get_conversation", map[string]any{"po_name": "nope"}, true, []string{"not found"}},
		{"pending", "get_pending_requests", nil, false, []string{`"count":1`, `"capability":"echo"`, `"question":"Proceed?"`, `"id":"` + rq.ID + `"`}},
		{"pending filtered", "get_pending_requests", map[string]any{"po_name": "greeter"}, false, []string{`"count":0,"requests":[]`}},
		{"respond unknown", "respond_to_request", map[string]any{"request_id": "rq-ffffff", "response": "y"}, true, []string{"not found: no request rq-ffffff", "Try: see 'pm requests --all'"}},
		{"respond malformed", "respond_to_request", map[string]any{"request_id": "rq-zz", "response": "y"}, true, []string{"bad arguments:", "not a rq id"}},
		{"respond", "respond_to_request", map[string]any{"request_id": rq.ID, "response": "Yes"}, false, []string{`"success":true`, `"capability":"echo"`, `"response":"Yes"`}},
		{"respond twice", "respond_to_request", map[string]any{"request_id": rq.ID, "response": "No"}, true, []string{"wrong state:", "already answered"}},
		{"send unknown", "send_message", map[string]any{"po_name": "nope", "message": "hi"}, true, []string{`not found: no prompt object "nope"`}},
		{"create task", "create_task", map[string]any{"description": "write docs"}, false, []string{`"description":"write docs"`, `"status":"active"`}},
		{"create task bad runtime", "create_task", map[string]any{"description": "x", "runtime": "warp"}, true, []string{"bad arguments:", "warp"}},
		{"status overview", "task_status", nil, false, []string{tk.ID, "summary"}},
		{"status one", "task_status", map[string]any{"task": tk.ID}, false, []string{`"view"`, "Design"}},
		{"status unknown", "task_status", map[string]any{"task": "tk-ffffff"}, true, []string{"not found"}},
		{"say", "say", map[string]any{"message": "hello room", "phase": ""}, false, []string{`"content":"hello room"`, `"closed":false`}},
		{"chat", "chat", map[string]any{}, false, []string{`"count":1`, "hello room"}},
		{"say unknown phase", "say", map[string]any{"message": "x", "phase": "ph-ffffff"}, true, []string{"not found"}},
		{"end phase", "end_phase", map[string]any{"task": tk.ID}, false, []string{`"status":"closed"`}},
		{"say closed", "say", map[string]any{"message": "late", "phase": ""}, true, []string{"wrong state"}},
		{"end phase again", "end_phase", map[string]any{"task": tk.ID}, true, []string{"Try: nothing to end"}},
		{"kill", "kill_task", map[string]any{"task": done.ID}, false, []string{done.ID}},
		{"kill unknown", "kill_task", map[string]any{"task": "tk-ffffff"}, true, []string{"not found"}},
		{"wait ended (killed: exit 5, as pm wait)", "wait_task", map[string]any{"task": done.ID}, true, []string{"wrong state:", "was killed"}},
		{"wait times out", "wait_task", map[string]any{"task": tk.ID, "timeout": "1ms"}, true, []string{"timed out:", "still manual"}},
		{"wait bad timeout", "wait_task", map[string]any{"task": tk.ID, "timeout": "soon"}, true, []string{`bad arguments: bad timeout "soon"`}},
	}
	for _, tt := range tests {
		got, isErr := callTool(t, cs, tt.tool, tt.args)
		if isErr != tt.wantErr {
			t.Errorf("%s: isError %v, want %v: %s", tt.name, isErr, tt.wantErr, got)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %s\nwant %q", tt.name, got, w)
			}
		}
	}
}

// An unknown tool is a protocol error, not a crash; the server keeps serving.
func TestUnknownTool(t *testing.T) {
	_, cs := connect(t, newSession(t), ToolsAll, nil)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("unknown tool: no error")
	}
	if _, isErr := callTool(t, cs, "list_prompt_objects", nil); isErr {
		t.Fatal("server stopped serving")
	}
}
