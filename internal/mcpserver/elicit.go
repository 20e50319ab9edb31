package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
)

// answerSchema is what an elicitation asks the client's user for.
var answerSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"answer": map[string]any{"type": "string", "description": "your answer"}},
	"required":   []string{"answer"},
}

// elicit puts an agent's question (a request.asked event) to the user of
// the first connected client that supports elicitation, and answers the
// request with what they accept (ops.Answer, as respond_to_request does). A
// declined or cancelled elicitation leaves the request pending for pm
// answer or respond_to_request; so does a request answered meanwhile.
func (s *Server) elicit(ctx context.Context, ev bus.Event) {
	d, _ := ev.Data.(bus.RequestAsked)
	id := d.Request
	if id == "" {
		return
	}
	for ss := range s.MCP.Sessions() {
		if p := ss.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
			continue
		}
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: fmt.Sprintf("@%s asks (%s): %s", ev.Actor, id, ev.Text),
			RequestedSchema: answerSchema})
		if err != nil || res.Action != "accept" {
			return
		}
		answer, _ := res.Content["answer"].(string)
		if _, err := ops.Answer(ctx, s.sess, ops.AnswerInput{ID: id, Text: answer}); err != nil && !errs.Is(err, errs.State) {
			s.sess.Store.Warnf("mcp: answering %s from the client: %v", id, err)
		}
		return
	}
}
