// Package mcp implements `pm mcp`: pm as an MCP server over stdio or
// Streamable HTTP (internal/mcpserver).
package mcp

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/listen"
	"github.com/plasmodium/pm/internal/mcpserver"
)

// Options are the inputs of pm mcp.
type Options struct {
	HTTP  string // listen address; "" serves stdio
	Tools string // po, tasks or all
	// Elicit puts agents' questions to the client's user where the client
	// supports elicitation.
	Elicit bool
}

// NewCmd builds `pm mcp`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve pm to MCP clients (stdio, or Streamable HTTP with --http)",
		Long: "pm mcp serves pm's prompt objects, tasks and rooms to an MCP client, acting as the human\n" +
			"(or as the agent PM_AGENT names). Over HTTP a bearer token is required: PM_MCP_TOKEN, or one\n" +
			"generated and printed to stderr.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().StringVar(&o.HTTP, "http", "", "serve Streamable HTTP on this loopback address, e.g. 127.0.0.1:7071")
	c.Flags().BoolVar(&o.Elicit, "elicit", false, "put agents' ask_human questions to the client's user (clients with elicitation)")
	c.Flags().StringVar(&o.Tools, "tools", "all", "tool set: po (prompt objects), tasks (tasks and rooms) or all")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	set, err := mcpserver.ParseToolSet(o.Tools)
	if err != nil {
		return err
	}
	if o.HTTP != "" {
		if err := mcpserver.CheckLoopback(o.HTTP); err != nil {
			return err
		}
	}
	sess, err := f.Session()
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(sess, set)
	if err != nil {
		return err
	}
	srv.Elicit = o.Elicit
	if o.HTTP == "" {
		return srv.Run(f.Context, mcpserver.StdioTransport(f.IO.In, f.IO.Out))
	}
	ln, err := listen.TCP(o.HTTP, "--http")
	if err != nil {
		return err
	}
	token := f.Getenv("PM_MCP_TOKEN")
	if token == "" {
		token = mcpserver.NewToken()
		fmt.Fprintf(f.IO.ErrOut, "pm mcp: token %s\n", token)
	}
	fmt.Fprintf(f.IO.ErrOut, "pm mcp: listening on http://%s%s\n", ln.Addr(), mcpserver.Path)
	return srv.ServeHTTP(f.Context, ln, token)
}
