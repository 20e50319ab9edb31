package bench

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// MCPResult holds the pm mcp figures.
type MCPResult struct {
	Send    Durations // tools/call send_message round trips to an idle greeter
	Updated Durations // pm say exit -> notifications/resources/updated
	Early   int       // notifications that arrived before pm say exited (counted as 0)
	// FromStart is pm say start -> the notification: an upper bound that
	// includes starting the say process.
	FromStart Durations
}

// MCP runs the real `pm mcp` over stdio against residents answered at once
// by the fake model: n send_message calls to the greeter (after one that
// starts it), then n `pm say` processes into a phase the client subscribed
// to, each timed from the process's exit to the update notification.
func MCP(ctx context.Context, bin, dir string, n int) (res *MCPResult, err error) {
	r, err := NewResidents(ctx, bin, dir, n+10)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	phase, err := benchPhase(r.Store, r.Launcher.State, n)
	if err != nil {
		return nil, err
	}
	updated := make(chan time.Time, n+1)
	cmd := exec.CommandContext(ctx, bin, "mcp")
	cmd.Dir, cmd.Env = r.Store.ProjectDir(), append(r.Launcher.Env, "OPENAI_API_KEY=bench")
	client := mcp.NewClient(&mcp.Implementation{Name: "pmbench", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { updated <- time.Now() },
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res = &MCPResult{}
	for i := range n + 1 {
		d, err := mcpSend(ctx, cs)
		if err != nil {
			return res, err
		}
		if i > 0 { // the first call starts the greeter's process
			res.Send = append(res.Send, d)
		}
	}
	uri := "pm://phases/" + phase.ID + "/messages"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return res, err
	}
	p := &PM{Bin: bin, Dir: r.Store.ProjectDir(), Env: Env(r.Store.ProjectDir()), Home: r.Store.Root}
	for i := range n {
		start := time.Now()
		if _, _, err := p.Run(ctx, "", "say", "--phase", phase.ID, fmt.Sprintf("message %d", i)); err != nil {
			return res, err
		}
		exited := time.Now()
		select {
		case at := <-updated:
			d := at.Sub(exited)
			if d < 0 {
				d, res.Early = 0, res.Early+1
			}
			res.Updated = append(res.Updated, d)
			res.FromStart = append(res.FromStart, at.Sub(start))
		case <-time.After(10 * time.Second):
			return res, fmt.Errorf("no resources/updated within 10s of pm say %d", i)
		}
	}
	return res, nil
}

func mcpSend(ctx context.Context, cs *mcp.ClientSession) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"po_name": "greeter", "message": "hello"}})
	d := time.Since(start)
	if err == nil && out.IsError {
		err = fmt.Errorf("send_message: %v", out.Content)
	}
	return d, err
}

// benchPhase opens a phase of n+1 messages on a new task (runtime none, so
// no agent process runs for it).
func benchPhase(s *store.Store, st state.State, n int) (*store.Phase, error) {
	sess := &ops.Session{Store: s, State: st, Actor: store.Human, Launcher: &agent.Launcher{Store: s, State: st, Exe: "/nonexistent/pm"}}
	ctx := context.Background()
	t, err := ops.CreateTask(ctx, sess, ops.TaskInput{Description: "mcp bench", Runtime: config.RuntimeNone})
	if err != nil {
		return nil, err
	}
	ph, err := ops.OpenPhase(ctx, sess, ops.PhaseInput{Task: t.ID, Name: "Bench", Limit: n + 1, Roles: []string{"designer"}})
	return ph.Phase, err
}
