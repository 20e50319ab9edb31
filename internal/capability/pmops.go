package capability

import (
	"context"
	"encoding/json"

	"github.com/plasmodium/pm/internal/ops"
)

// The pm operations offered to models are the operations layer's tools
// (internal/ops): one definition, with its input struct's derived schema,
// shared with the CLI and the MCP server. They run in-process as the agent.
func init() {
	for _, name := range ops.ToolNames() {
		t, _ := ops.LookupTool(name)
		register(impl{name: t.Name, desc: t.Description, params: t.Schema,
			call: func(ctx context.Context, env *Env, args json.RawMessage) (string, error) {
				return t.Call(ctx, env.session(), args)
			}})
	}
}
