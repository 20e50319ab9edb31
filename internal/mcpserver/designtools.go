package mcpserver

import (
	"context"

	"github.com/plasmodium/pm/internal/ops"
)

// designsArgs is the designs tool's (empty) input.
type designsArgs struct{}

// addDesignTools offers the code designer (pm design, pm designs). A design
// writes the file back only with apply=true: an MCP client has no terminal
// for pm design --apply's question.
func (s *Server) addDesignTools() {
	addTool(s.MCP, "design", "Review and improve a file from several angles until the reviews converge (pm design). "+
		"Returns the report and diff; apply=true writes the result back; resume=ds-ID goes on with a design.", op(s.sess, ops.DesignCall))
	addTool(s.MCP, "designs", "List code designs and how each ended (pm designs).",
		op(s.sess, func(ctx context.Context, sess *ops.Session, _ designsArgs) ([]ops.DesignSummary, error) {
			return ops.Designs(ctx, sess)
		}))
}
