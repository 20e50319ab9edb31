// Package agentrun implements the hidden `pm agent-run NAME`: the host process
// that runs one agent. pm starts it; people do not.
package agentrun

import (
	"context"
	"log/slog"
	"slices"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/llmagent"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// NewCmd builds `pm agent-run`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "agent-run NAME",
		Short:  "Run one agent in this process (started by pm)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// The host holds the API key in its environment: keep other
			// processes of the same user (run_command among them) from reading
			// it through /proc/PID/environ.
			driver.NotDumpable()
			s, err := f.Store()
			if err != nil {
				return err
			}
			l, err := f.Launcher(s)
			if err != nil {
				return err
			}
			r := &llmagent.Runner{Store: s, State: l.State, Launcher: l, Getenv: f.Getenv,
				Log: slog.New(slog.NewTextHandler(f.IO.ErrOut, nil)).With("agent", args[0])}
			giveUp := func(a *store.Agent, reason string) error {
				if a.Role != "" { // an exec role: its owner decides what the room does without it
					task.TellStopped(s, l.State, a, "@"+a.Name+" stopped: "+reason)
					return nil
				}
				return task.GiveUpOwner(s, l.State, a, reason)
			}
			// A task whose code goes through a git remote has its worktree
			// made on each machine that needs it: this one runs its agent.
			if a, err := l.State.Agent(args[0]); err == nil && a.TaskID != "" {
				if _, err := task.LocalWorktree(s, l.State, a.TaskID); err != nil {
					r.Log.Warn("the task's worktree on this machine", "task", a.TaskID, "err", err)
				}
			}
			return agent.Host(f.Context, s, l.State, args[0], f.Environ(), f.IO.ErrOut, r.RunFenced, giveUp, asAgent(f, s, l.State, args[0]))
		},
	}
}

// asAgent runs the pm commands an exec agent sends its host (internal/broker)
// in this process, as that agent whatever its environment said, with the
// host's environment (which holds the keys the llm hosts it starts need)
// and this store; what they write masks the token (Commands' argument) too.
// A loop breaker's "stop" in one of them halts the agent (the host ends its
// CLI), whether its broker held the line or the operation held itself.
func asAgent(f *cmdutil.Factory, s *store.Store, st state.State, name string) agent.Commands {
	return func(token string, halt func(string), fence state.AgentLease) broker.Runner {
		return guardRepeats(s, st, name, s.Config().Governance.Loop.Repeat, halt, func(ctx context.Context, args []string, stdio broker.Stdio) int {
			g := *f
			g.Context = ctx
			g.IO = cmdutil.IOStreams{In: stdio.In, Out: stdio.Out, ErrOut: stdio.Err}
			g.Getenv = func(k string) string {
				switch k {
				case "PM_AGENT":
					return name
				case "PM_HOME":
					return s.Root
				}
				return f.Getenv(k)
			}
			g.Getwd = func() (string, error) { // where the agent works: its task's worktree
				if a, err := st.Agent(name); err == nil {
					return agent.WorkDir(s, st, a.TaskID), nil
				}
				return s.ProjectDir(), nil
			}
			g.MaskAlso = append(slices.Clip(f.MaskAlso), token)
			g.Halt = halt   // the loop breaker's stop in a command (pm phase) ends the agent
			g.Fence = fence // its room appends carry the host's lease (state.AppendFenced)
			return f.RunAsAgent(&g, args)
		})
	}
}
