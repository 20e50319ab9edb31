package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/ops"
)

// resources/list names the bus, the tasks and every object's resources;
// resources/templates/list names every template.
func TestResourceLists(t *testing.T) {
	_, cs := connect(t, newSession(t), ToolsPO, nil)
	ctx := context.Background()
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	for _, want := range []string{uriBus, uriTasks, "po://echo/conversation", "po://echo/config", "po://echo/prompt", "po://greeter/prompt"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources %v lack %s", uris, want)
		}
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tmpl.ResourceTemplates {
		got = append(got, r.URITemplate)
	}
	want := []string{tmplPOConv, tmplPOConfig, tmplPOPrompt, tmplTask, tmplPhase}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("templates %v, want %v", got, want)
	}
}

// Every resource reads; an unknown name or id is an error in pm's words.
func TestReadResources(t *testing.T) {
	sess := newSession(t)
	ctx := context.Background()
	tk, err := ops.CreateTask(ctx, sess, ops.TaskInput{Description: "build it"})
	if err != nil {
		t.Fatal(err)
	}
	ph, err := ops.OpenPhase(ctx, sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 5, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(ctx, sess, ops.SayInput{Message: "first idea", Phase: ph.Phase.ID}); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, sess, ToolsAll, nil)
	tests := []struct {
		uri     string
		mime    string
		want    string
		wantErr string
	}{
		{uriBus, "application/json", `"kind": "task.created"`, ""},
		{uriTasks, "application/json", tk.ID, ""},
		{"pm://tasks/" + tk.ID, "application/json", `"Design"`, ""},
		{"pm://tasks/tk-ffffff", "", "", "not found"},
		{"pm://phases/" + ph.Phase.ID + "/messages", "application/json", "first idea", ""},
		{"pm://phases/ph-ffffff/messages", "", "", "not found"},
		{"po://echo/conversation", "application/json", `"count": 0`, ""},
		{"po://echo/config", "application/json", `"runtime": "none"`, ""},
		{"po://echo/prompt", "text/markdown", "You echo.", ""},
		{"po://nope/prompt", "", "", `not found: no prompt object "nope"`},
		{"pm://elsewhere", "", "", "not found"},
	}
	for _, tt := range tests {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.uri, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.uri, err)
			continue
		}
		c := res.Contents[0]
		if c.MIMEType != tt.mime || !strings.Contains(c.Text, tt.want) {
			t.Errorf("%s: %s %s\nwant %s with %q", tt.uri, c.MIMEType, c.Text, tt.mime, tt.want)
		}
	}
}

// A client subscribed to a phase's messages is told when a message lands
// (driven by the bus), and not about resources it did not subscribe to.
func TestSubscribe(t *testing.T) {
	sess := newSession(t)
	ctx := context.Background()
	tk, err := ops.CreateTask(ctx, sess, ops.TaskInput{Description: "build it"})
	if err != nil {
		t.Fatal(err)
	}
	ph, err := ops.OpenPhase(ctx, sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 5, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	updated := make(chan string, 16)
	_, cs := connect(t, sess, ToolsAll, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}})
	uri := "pm://phases/" + ph.Phase.ID + "/messages"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(ctx, sess, ops.SayInput{Message: "hello", Phase: ph.Phase.ID}); err != nil {
		t.Fatal(err)
	}
	if got := <-updated; got != uri {
		t.Fatalf("updated %s, want %s", got, uri)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uriTasks}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(ctx, sess, ops.SayInput{Message: "again", Phase: ph.Phase.ID}); err != nil {
		t.Fatal(err)
	}
	if got := <-updated; got != uriTasks {
		t.Fatalf("after unsubscribing, updated %s, want only %s", got, uriTasks)
	}
}

func TestUpdatedURIs(t *testing.T) {
	tests := []struct {
		k    eventKey
		want []string
	}{
		{eventKey{}, []string{uriBus}},
		{eventKey{task: "tk-1", phase: "ph-2"}, []string{uriBus, uriTasks, "pm://tasks/tk-1", "pm://phases/ph-2/messages"}},
		{eventKey{agents: []string{"human", "echo"}}, []string{uriBus, "po://echo/conversation"}},
	}
	for _, tt := range tests {
		if got := updatedURIs(tt.k); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.k, got, tt.want)
		}
	}
}
