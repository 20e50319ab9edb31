package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/bus"
)

// eventKey is what of an event names resources.
type eventKey struct {
	task, phase string
	agents      []string // whose conversation may have changed
}

func keyOf(ev bus.Event) eventKey {
	k := eventKey{task: ev.TaskID, phase: ev.PhaseID}
	if strings.HasPrefix(string(ev.Kind), "po.") {
		k.agents = []string{ev.Actor, ev.Agent}
	}
	return k
}

// Watch sends notifications/resources/updated for every resource an event
// on the bus changes, from the bus's end now until ctx ends. The SDK sends
// each only to the sessions subscribed to that URI.
func (s *Server) Watch(ctx context.Context) {
	b := s.sess.Store.Bus()
	_, end, err := b.Tail(0)
	if err != nil {
		s.sess.Store.Warnf("mcp: cannot follow the bus: %v", err)
		return
	}
	s.follow(ctx, b, end)
}

func (s *Server) follow(ctx context.Context, b bus.Bus, from bus.Cursor) {
	for d, err := range b.Subscribe(ctx, from) {
		if err != nil {
			if ctx.Err() == nil {
				s.sess.Store.Warnf("mcp: following the bus: %v", err)
			}
			return
		}
		if s.Elicit && d.Event.Kind == bus.EvRequestAsked {
			go s.elicit(ctx, d.Event) // the question waits on a person; the bus goes on
		}
		for _, uri := range updatedURIs(keyOf(d.Event)) {
			// A client gone mid-notification is not the server's failure.
			_ = s.MCP.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
}
