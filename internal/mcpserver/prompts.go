package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
)

// maxPromptArg bounds one prompt argument (bytes): it is put into the
// message the client's model reads.
const maxPromptArg = 4 << 10

// flow is one of pm's built-in flows as an MCP prompt: the message it
// gives the client's model names the tools that carry it out.
type flow struct {
	prompt *mcp.Prompt
	// text builds the message from the checked arguments; an error is the
	// client's (an unknown task), said as pm says it.
	text func(ctx context.Context, s *Server, args map[string]string) (string, error)
}

// taskFlows need the task and request tools (tool sets tasks and all).
var taskFlows = []flow{
	{&mcp.Prompt{Name: "start_task", Title: "Start a task",
		Description: "Hand a piece of work to pm: an owner agent plans it, opens discussions and commits it.",
		Arguments: []*mcp.PromptArgument{
			{Name: "description", Title: "What to do", Description: "the work, as you would tell a colleague", Required: true},
			{Name: "review", Title: "Hold for review", Description: `"yes" holds its merge until you merge or reject it`},
		}},
		startTask},
	{&mcp.Prompt{Name: "landing_page", Title: "Build a landing page with pm",
		Description: "pm's landing-page flow (pm demo): an owner brainstorms with a designer and a developer, writes index.html, checks it and commits.",
		Arguments:   []*mcp.PromptArgument{{Name: "product", Title: "Product", Description: "what the page is for (default: our product)"}}},
		func(ctx context.Context, s *Server, a map[string]string) (string, error) {
			product := strings.TrimSpace(a["product"])
			if product == "" {
				product = "our product"
			}
			return startTask(ctx, s, map[string]string{"description": "Build a landing page for " + product})
		}},
	{&mcp.Prompt{Name: "review_task", Title: "Review a task's work",
		Description: "Read a finished task's changes and merge them or send them back, with the user deciding.",
		Arguments:   []*mcp.PromptArgument{{Name: "task", Title: "Task", Description: "its id (tk-…) or a unique prefix", Required: true}}},
		func(ctx context.Context, s *Server, a map[string]string) (string, error) {
			st, err := ops.Status(ctx, s.sess, ops.StatusInput{Task: a["task"]})
			if err != nil {
				return "", err
			}
			t := st.View.Task
			return fmt.Sprintf("Review pm task %s (%q, %s). Call task_diff with task %q and summarise the changes file by file: "+
				"what changed, what looks wrong or missing. Then ask the user whether to merge it (merge_task; on a conflict "+
				"theirs=true keeps the task's side, ours=true the branch's) or send it back (reject_task with their reason, "+
				"which its owner reads). Do not merge or reject without the user's word.", t.ID, t.Description, t.Status, t.ID), nil
		}},
	{&mcp.Prompt{Name: "needs_me", Title: "What needs me",
		Description: "Go through what pm's agents wait on a person for, one at a time."},
		func(context.Context, *Server, map[string]string) (string, error) {
			return "Find what needs the user in pm: call get_pending_requests, and task_status for tasks that are stalled, idle, " +
				"stuck or whose merge waits. Put each to the user one at a time with what it is about, and carry out their " +
				"decision: respond_to_request with their answer, merge_task or reject_task for a waiting merge, kill_task " +
				"(restart=true for a fresh owner) for a task they give up on.", nil
		}},
}

// startTask is start_task's message (landing_page's too).
func startTask(_ context.Context, _ *Server, a map[string]string) (string, error) {
	review := ""
	if strings.EqualFold(a["review"], "yes") {
		review = ` with review=true, so its work waits for the user's decision before it is merged`
	}
	return fmt.Sprintf("Start this work in pm: call create_task with the description below%s. "+
		"Then follow it with wait_task (it returns when the task is done, killed, stalled or waits for a decision) "+
		"and task_status, answer what its agents ask through get_pending_requests and respond_to_request after asking the user, "+
		"and report what it did (task_diff shows its changes).\n\nDescription:\n%s", review, a["description"]), nil
}

// poFlows need the prompt-object tools (tool sets po and all).
var poFlows = []flow{
	{&mcp.Prompt{Name: "talk_to", Title: "Talk to a prompt object",
		Description: "Send a message to one of the project's prompt objects and read its answer.",
		Arguments: []*mcp.PromptArgument{
			{Name: "po", Title: "Prompt object", Description: "its name (list_prompt_objects)", Required: true},
			{Name: "message", Title: "Message", Required: true},
		}},
		func(_ context.Context, _ *Server, a map[string]string) (string, error) {
			return fmt.Sprintf("Call send_message with po_name %q and the message below, then show the user its answer. "+
				"If it asks the user something meanwhile (get_pending_requests), put it to them and respond_to_request.\n\nMessage:\n%s",
				a["po"], a["message"]), nil
		}},
}

// addPrompts offers the flows whose tools the set has.
func (s *Server) addPrompts(set ToolSet) {
	var flows []flow
	if set == ToolsTasks || set == ToolsAll {
		flows = append(flows, taskFlows...)
	}
	if set == ToolsPO || set == ToolsAll {
		flows = append(flows, poFlows...)
	}
	for _, f := range flows {
		s.MCP.AddPrompt(f.prompt, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args, err := checkArgs(f.prompt, req.Params.Arguments)
			if err == nil {
				var text string
				if text, err = f.text(ctx, s, args); err == nil {
					return &mcp.GetPromptResult{Description: f.prompt.Description,
						Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
				}
			}
			return nil, resourceError(err) // invalid params for a bad argument or an unknown task

		})
	}
}

// checkArgs refuses an unknown or missing argument and one over
// maxPromptArg or not UTF-8.
func checkArgs(p *mcp.Prompt, in map[string]string) (map[string]string, error) {
	known := map[string]bool{}
	var names []string
	for _, a := range p.Arguments {
		known[a.Name] = true
		names = append(names, a.Name)
		if a.Required && strings.TrimSpace(in[a.Name]) == "" {
			return nil, errs.Usagef("give "+a.Name+" ("+a.Description+")", "prompt %s: %s is required", p.Name, a.Name)
		}
	}
	for k, v := range in {
		switch {
		case !known[k]:
			return nil, errs.Usagef("its arguments: "+strings.Join(names, ", "), "prompt %s has no argument %q", p.Name, k)
		case len(v) > maxPromptArg:
			return nil, errs.Usagef(fmt.Sprintf("at most %d bytes", maxPromptArg), "prompt %s: %s is %d bytes", p.Name, k, len(v))
		case !utf8.ValidString(v):
			return nil, errs.Usagef("send it as UTF-8 text", "prompt %s: %s is not UTF-8", p.Name, k)
		}
	}
	return in, nil
}
