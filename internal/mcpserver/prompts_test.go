package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/ops"
)

// Each tool set offers the flows whose tools it has.
func TestPromptsPerToolSet(t *testing.T) {
	for _, tc := range []struct {
		set  ToolSet
		want []string
	}{
		{ToolsAll, []string{"landing_page", "needs_me", "review_task", "start_task", "talk_to"}},
		{ToolsTasks, []string{"landing_page", "needs_me", "review_task", "start_task"}},
		{ToolsPO, []string{"talk_to"}},
	} {
		t.Run(string(tc.set), func(t *testing.T) {
			_, cs := connect(t, newSession(t), tc.set, nil)
			res, err := cs.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range res.Prompts {
				got = append(got, p.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("prompts %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGetPrompt(t *testing.T) {
	sess := newSession(t)
	tk, err := ops.CreateTask(t.Context(), sess, ops.TaskInput{Description: "Write the changelog"})
	if err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, sess, ToolsAll, nil)
	for _, tc := range []struct {
		name    string
		prompt  string
		args    map[string]string
		want    []string // in the message
		wantErr string
	}{
		{"start", "start_task", map[string]string{"description": "Add a footer"}, []string{"create_task", "wait_task", "Description:\nAdd a footer"}, ""},
		{"start with review", "start_task", map[string]string{"description": "x", "review": "yes"}, []string{"review=true"}, ""},
		{"review by prefix", "review_task", map[string]string{"task": tk.ID[:5]}, []string{"task_diff with task \"" + tk.ID + "\"", "Write the changelog", "merge_task", "reject_task"}, ""},
		{"landing page", "landing_page", map[string]string{"product": "a bakery"}, []string{"create_task", "Description:\nBuild a landing page for a bakery"}, ""},
		{"landing page default", "landing_page", nil, []string{"Build a landing page for our product"}, ""},
		{"needs me", "needs_me", nil, []string{"get_pending_requests", "respond_to_request"}, ""},
		{"talk", "talk_to", map[string]string{"po": "echo", "message": "hello"}, []string{`po_name "echo"`, "Message:\nhello"}, ""},
		{"missing", "start_task", nil, nil, "description is required"},
		{"blank", "talk_to", map[string]string{"po": " ", "message": "hi"}, nil, "po is required"},
		{"unknown argument", "needs_me", map[string]string{"x": "1"}, nil, `has no argument "x"`},
		{"too long", "start_task", map[string]string{"description": strings.Repeat("a", maxPromptArg+1)}, nil, "is 4097 bytes"},
		{"unknown task", "review_task", map[string]string{"task": "tk-ffffff"}, nil, "Try:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: tc.prompt, Arguments: tc.args})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
				t.Fatalf("messages %+v, want one from the user", res.Messages)
			}
			msg := res.Messages[0].Content.(*mcp.TextContent).Text
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}
