package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
)

// The built-in flows as MCP prompts (prompts/list, prompts/get): what a
// person asks their client to do with pm, worded for the client's model
// and naming this server's tools. A set lists the prompts whose tools it
// offers. A prompt runs no operation but the read that grounds it (talk
// reads the object it names, ops.InspectPO); its arguments are checked and
// a missing or unknown one is an error that names it.

// addTaskPrompts adds the task flows (the tasks tools).
func (s *Server) addTaskPrompts() {
	s.MCP.AddPrompt(&mcp.Prompt{Name: "run_task", Title: "Run a task with pm",
		Description: "Hand a piece of work to pm's agents and see it through: create the task, follow it, answer its agents, review and merge its work.",
		Arguments:   []*mcp.PromptArgument{{Name: "description", Description: "what the task is to do", Required: true}}},
		func(ctx context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			d, err := promptArg(r, "description")
			if err != nil {
				return nil, err
			}
			return userPrompt("Run a pm task", runTaskText(d)), nil
		})
	s.MCP.AddPrompt(&mcp.Prompt{Name: "landing_page", Title: "Build a landing page with pm",
		Description: "pm's landing-page flow: an owner opens a brainstorm with a designer and a developer, writes index.html, checks it and commits.",
		Arguments:   []*mcp.PromptArgument{{Name: "product", Description: "the product the page is for (default: our product)"}}},
		func(ctx context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			p := strings.TrimSpace(r.Params.Arguments["product"])
			if p == "" {
				p = "our product"
			}
			if err := onlyArgs(r, "product"); err != nil {
				return nil, err
			}
			return userPrompt("pm's landing-page flow", runTaskText("Build a landing page for "+p)), nil
		})
}

// addPOPrompts adds the prompt-object flow (the po tools).
func (s *Server) addPOPrompts() {
	s.MCP.AddPrompt(&mcp.Prompt{Name: "talk", Title: "Talk to a prompt object",
		Description: "A conversation with one of pm's prompt objects (list_prompt_objects names them), its questions to you answered as they come.",
		Arguments: []*mcp.PromptArgument{{Name: "po", Description: "the prompt object's name", Required: true},
			{Name: "message", Description: "the first thing to say to it"}}},
		func(ctx context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			name, err := promptArg(r, "po", "message")
			if err != nil {
				return nil, err
			}
			po, err := ops.InspectPO(ctx, s.sess, ops.InspectInput{PO: name})
			if err != nil {
				return nil, resourceError(err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Talk with pm's prompt object @%s (%s). Send it each message with send_message (po_name %q) and show me its reply; "+
				"get_conversation has what was said before. When it asks me something (get_pending_requests), put the question to me and "+
				"give my answer with respond_to_request.", po.Name, po.Description, po.Name)
			if m := strings.TrimSpace(r.Params.Arguments["message"]); m != "" {
				fmt.Fprintf(&b, "\n\nStart by sending it: %s", m)
			}
			return userPrompt("Talk to @"+po.Name, b.String()), nil
		})
}

// runTaskText is the task flow for a description, tool by tool.
func runTaskText(description string) string {
	return "Run this as a pm task: " + description + "\n\n" +
		"1. Create it with create_task (description as above). Its owner agent starts and works with other agents in bounded phases.\n" +
		"2. Follow it with task_status; wait_task blocks until it is done, killed or stalled.\n" +
		"3. When its agents ask something (get_pending_requests), ask me and answer with respond_to_request; confirmations take yes, always or a reason to deny.\n" +
		"4. When it is done, show me its changes with task_diff; merge_task merges a task waiting for review, reject_task sends it back with why.\n" +
		"5. If it stalls, tell me task_status's reason and next step; kill_task with restart=true starts a fresh owner only if I say so."
}

func userPrompt(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Description: description,
		Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}

// promptArg is the required argument name, the arguments all of known
// (name and also); a usage error names what is missing or unknown.
func promptArg(r *mcp.GetPromptRequest, name string, also ...string) (string, error) {
	if err := onlyArgs(r, append([]string{name}, also...)...); err != nil {
		return "", err
	}
	v := strings.TrimSpace(r.Params.Arguments[name])
	if v == "" {
		return "", resourceError(errs.Usagef("give the argument "+name, "prompt %s needs the argument %s", r.Params.Name, name))
	}
	return v, nil
}

// onlyArgs refuses an argument the prompt does not take.
func onlyArgs(r *mcp.GetPromptRequest, known ...string) error {
	for k := range r.Params.Arguments {
		ok := false
		for _, n := range known {
			ok = ok || k == n
		}
		if !ok {
			return resourceError(errs.Usagef("its arguments are "+strings.Join(known, ", "), "prompt %s has no argument %s", r.Params.Name, k))
		}
	}
	return nil
}
