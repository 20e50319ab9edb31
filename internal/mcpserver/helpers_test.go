package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// echoPrompt is a prompt object on runtime none: pm never starts a process
// for it, so a test serves its inbox in-process (servePO).
const echoPrompt = `---
name: echo
description: test object that echoes
capabilities: [think, read_file, greeter]
runtime: none
---
# Echo

You echo.
`

// newSession is a real state directory on runtime none with the echo
// object, acted on by the human.
func newSession(t testing.TB) *ops.Session {
	t.Helper()
	s := storetest.New(t)
	s.Config().Runtime.Default = "none"
	if err := s.CreatePrompt("echo", []byte(echoPrompt)); err != nil {
		t.Fatal(err)
	}
	return &ops.Session{Store: s, State: fsstate.New(s), Actor: store.Human, Launcher: &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/nonexistent/pm"}}
}

// connect starts a server of set over in-memory transports and returns a
// client session; opts may carry notification handlers.
func connect(t testing.TB, sess *ops.Session, set ToolSet, opts *mcp.ClientOptions) (*Server, *mcp.ClientSession) {
	t.Helper()
	srv, err := New(sess, set)
	if err != nil {
		t.Fatal(err)
	}
	return srv, serve(t, srv, sess, opts)
}

// serve connects a client to srv over in-memory transports, with the bus
// watcher running.
func serve(t testing.TB, srv *Server, sess *ops.Session, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	ready := make(chan struct{})
	go func() {
		_, end, err := sess.Store.Bus().Tail(0)
		if err != nil {
			t.Error(err)
		}
		close(ready)
		srv.follow(ctx, sess.Store.Bus(), end)
	}()
	<-ready // the watcher holds its cursor before any test acts
	ss, err := srv.MCP.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callTool calls a tool and returns its text and whether it is a tool error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text(res.Content), res.IsError
}

func text(cs []mcp.Content) string {
	var b strings.Builder
	for _, c := range cs {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// servePO answers the echo object's inbox in-process with handle until the
// test ends.
func servePO(t testing.TB, s *store.Store, handle inbox.Handler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = inbox.Serve(ctx, s, fsstate.New(s), "echo", handle, nil)
	}()
	t.Cleanup(func() { cancel(); <-done })
}
