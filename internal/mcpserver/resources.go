package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
)

// busTail is how many events bus://messages shows.
const busTail = 100

// Resource URIs and templates.
const (
	uriBus       = "bus://messages"
	uriTasks     = "pm://tasks"
	tmplTask     = "pm://tasks/{id}"
	tmplPhase    = "pm://phases/{id}/messages"
	tmplPOConv   = "po://{name}/conversation"
	tmplPOConfig = "po://{name}/config"
	tmplPOPrompt = "po://{name}/prompt"
)

var templates = []*mcp.ResourceTemplate{
	{URITemplate: tmplPOConv, Name: "po-conversation", Description: "A prompt object's conversation (JSON)", MIMEType: "application/json"},
	{URITemplate: tmplPOConfig, Name: "po-config", Description: "A prompt object's configuration (JSON)", MIMEType: "application/json"},
	{URITemplate: tmplPOPrompt, Name: "po-prompt", Description: "A prompt object's prompt body (markdown)", MIMEType: "text/markdown"},
	{URITemplate: tmplTask, Name: "task", Description: "A task with its phases and agents (JSON)", MIMEType: "application/json"},
	{URITemplate: tmplPhase, Name: "phase-messages", Description: "A phase's messages (JSON)", MIMEType: "application/json"},
}

// addResources lists the bus, the task overview and each prompt object's
// three resources, and the templates for every resource by name or id.
func (s *Server) addResources() error {
	s.MCP.AddResource(&mcp.Resource{URI: uriBus, Name: "bus", Description: "Recent events of pm's bus (JSON)", MIMEType: "application/json"}, s.read)
	s.MCP.AddResource(&mcp.Resource{URI: uriTasks, Name: "tasks", Description: "All tasks (JSON)", MIMEType: "application/json"}, s.read)
	objs, err := ops.Prompts(context.Background(), s.sess, ops.PromptsInput{})
	if err != nil {
		return err
	}
	for _, o := range objs {
		for _, t := range templates[:3] {
			uri := strings.Replace(t.URITemplate, "{name}", o.Name, 1)
			s.MCP.AddResource(&mcp.Resource{URI: uri, Name: o.Name + "-" + strings.TrimPrefix(t.Name, "po-"), MIMEType: t.MIMEType}, s.read)
		}
	}
	for _, t := range templates {
		s.MCP.AddResourceTemplate(t, s.read)
	}
	return nil
}

// read serves every resource: the URI names the operation and its input.
func (s *Server) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	v, mime, err := s.resource(ctx, uri)
	if err != nil {
		if errors.Is(err, errUnknownURI) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, resourceError(err)
	}
	text, ok := v.(string)
	if !ok {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, err
		}
		text = string(data)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
}

var errUnknownURI = errors.New("unknown resource")

// resourceError is an operation's error as a JSON-RPC error: invalid params
// (what the SDK uses for an unknown resource) when the URI names nothing or
// is malformed, internal error otherwise; the message is the one pm's tools
// give, with its Try: hint.
func resourceError(err error) error {
	code := int64(jsonrpc.CodeInternalError)
	if errs.Is(err, errs.NotFound) || errs.Is(err, errs.Usage) {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: capability.Describe(err)}
}

func (s *Server) resource(ctx context.Context, uri string) (any, string, error) {
	const js = "application/json"
	switch {
	case uri == uriBus:
		ds, _, err := s.sess.Store.Bus().Tail(busTail)
		evs := make([]json.RawMessage, len(ds))
		for i, d := range ds {
			evs[i] = d.Raw
		}
		return evs, js, err
	case uri == uriTasks:
		r, err := ops.Status(ctx, s.sess, ops.StatusInput{All: true})
		return r.Summary, js, err
	}
	if id, ok := cut(uri, "pm://tasks/", ""); ok {
		r, err := ops.Status(ctx, s.sess, ops.StatusInput{Task: id})
		return r.View, js, err
	}
	if id, ok := cut(uri, "pm://phases/", "/messages"); ok {
		r, err := ops.Chat(ctx, s.sess, ops.ChatInput{Phase: id})
		return r, js, err
	}
	if name, ok := cut(uri, "po://", "/conversation"); ok {
		r, err := ops.Conversation(ctx, s.sess, ops.ConversationInput{PO: name})
		return r, js, err
	}
	if name, ok := cut(uri, "po://", "/config"); ok {
		r, err := ops.InspectPO(ctx, s.sess, ops.InspectInput{PO: name})
		return r.Config, js, err
	}
	if name, ok := cut(uri, "po://", "/prompt"); ok {
		r, err := ops.InspectPO(ctx, s.sess, ops.InspectInput{PO: name})
		return r.PromptBody, "text/markdown", err
	}
	return nil, "", errUnknownURI
}

// cut returns the one path segment between prefix and suffix of uri.
func cut(uri, prefix, suffix string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutSuffix(rest, suffix)
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return "", false
	}
	return rest, true
}

// updatedURIs are the resources an event changes.
func updatedURIs(k eventKey) []string {
	uris := []string{uriBus}
	if k.task != "" {
		uris = append(uris, uriTasks, "pm://tasks/"+k.task)
	}
	if k.phase != "" {
		uris = append(uris, "pm://phases/"+k.phase+"/messages")
	}
	for _, n := range k.agents {
		if n != "" && n != "human" {
			uris = append(uris, "po://"+n+"/conversation")
		}
	}
	return uris
}
