package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The built-in flows are MCP prompts (issue 25): each tool set lists the
// ones whose tools it offers; a prompt's messages name those tools and
// carry its arguments; a missing or unknown argument is an error that
// names it.
func TestPrompts(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		set  ToolSet
		want string
	}{
		{ToolsAll, "landing_page run_task talk"},
		{ToolsTasks, "landing_page run_task"},
		{ToolsPO, "talk"},
	} {
		_, cs := connect(t, newSession(t), tt.set, nil)
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range res.Prompts {
			names = append(names, p.Name)
			if p.Description == "" || len(p.Arguments) == 0 {
				t.Errorf("%s: prompt %s has no description or arguments", tt.set, p.Name)
			}
		}
		if got := strings.Join(names, " "); got != tt.want {
			t.Errorf("--tools %s lists prompts %q, want %q", tt.set, got, tt.want)
		}
	}
	_, cs := connect(t, newSession(t), ToolsAll, nil)
	text := func(r *mcp.GetPromptResult) string {
		var b strings.Builder
		for _, m := range r.Messages {
			if tc, ok := m.Content.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	for _, tt := range []struct {
		name string
		args map[string]string
		want []string
	}{
		{"run_task", map[string]string{"description": "Write the release notes"}, []string{"create_task", "Write the release notes", "respond_to_request", "task_diff", "merge_task"}},
		{"landing_page", map[string]string{"product": "Plasmodium"}, []string{"create_task", "Build a landing page for Plasmodium"}},
		{"talk", map[string]string{"po": "echo", "message": "hello"}, []string{"send_message", "@echo", "test object that echoes", "hello"}},
	} {
		r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tt.name, Arguments: tt.args})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(text(r), w) {
				t.Errorf("%s: no %q in %q", tt.name, w, text(r))
			}
		}
	}
	for _, tt := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"run_task", nil, "description"},
		{"talk", map[string]string{"po": "nobody"}, "nobody"},
	} {
		_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tt.name, Arguments: tt.args})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, want an error naming %q", tt.name, tt.args, err, tt.want)
		}
	}
}
