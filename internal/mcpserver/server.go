package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
)

// ToolSet names which tools a server offers (`pm mcp --tools`).
type ToolSet string

// Tool sets: the prompt-object contract, pm's tasks and rooms, or both.
const (
	ToolsPO    ToolSet = "po"
	ToolsTasks ToolSet = "tasks"
	ToolsAll   ToolSet = "all"
)

// ParseToolSet checks a --tools value.
func ParseToolSet(s string) (ToolSet, error) {
	switch t := ToolSet(s); t {
	case ToolsPO, ToolsTasks, ToolsAll:
		return t, nil
	case "":
		return ToolsAll, nil
	}
	return "", errs.Usagef("--tools po, tasks or all", "unknown tool set %q", s)
}

// Version is what the server reports as its implementation version.
var Version = "dev"

// Server is pm's MCP server over one ops session.
type Server struct {
	MCP *mcp.Server
	// Elicit puts agents' ask_human questions to the user of a client that
	// supports elicitation (pm mcp --elicit); set before serving.
	Elicit bool
	sess   *ops.Session
}

// New builds the server: tools of the set, resources and templates, and
// subscription support. Call Watch to drive resource updates from the bus.
func New(sess *ops.Session, set ToolSet) (*Server, error) {
	s := &Server{sess: sess}
	s.MCP = mcp.NewServer(&mcp.Implementation{Name: "pm", Version: Version}, &mcp.ServerOptions{
		Instructions:       "pm orchestrates prompt objects (POs) and tasks of LLM agents. Read resources for state; tools act.",
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities:       &mcp.ServerCapabilities{},
		// The handshake-era protocols: there resources/subscribe has
		// registered the subscription when it returns, so an update that
		// follows it is never missed. (Under 2026-07-28 a subscription is a
		// subscriptions/listen stream that registers some time after the
		// client's Subscribe returns; the SDK's client and ours raced.)
		SupportedProtocolVersions: []string{"2025-11-25", "2025-06-18", "2025-03-26"},
	})
	if set == ToolsPO || set == ToolsAll {
		s.addPOTools()
		s.addPOPrompts() // prompts.go
	}
	if set == ToolsTasks || set == ToolsAll {
		s.addTaskTools(set == ToolsTasks)
		s.addDesignTools()
		s.addTaskPrompts()
	}
	if err := s.addResources(); err != nil {
		return nil, err
	}
	return s, nil
}

// Run serves one client over t (stdio: an mcp.IOTransport on the process's
// stdin and stdout) until it disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	if err := s.MCP.Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}
