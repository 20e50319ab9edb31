// Package demo implements `pm demo`: the seed's landing-page flow on the llm
// runtime, offline by default (model replies replayed by a local
// OpenAI-protocol server), on a real model when a provider is configured.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/replay"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// Description is the demo's task.
const Description = "Build a landing page for our product"

// Options are the inputs of pm demo.
type Options struct {
	Dir     string
	Timeout time.Duration
	Live    bool
	// Talk plays one of the seed's five demos in pm talk (Which: its number
	// or name; empty lists them); Plain keeps the line mode.
	Talk  bool
	Which string
	Plain bool
}

// NewCmd builds `pm demo`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "demo [--talk [N|NAME]]",
		Short: "Run the landing-page flow: an llm owner, a phase with two llm role agents, a real commit",
		Long: "Runs the seed's landing-page flow with the real binary, real agent processes, a real phase, real messages\n" +
			"and a real git commit in a fresh repository. Without OPENAI_API_KEY/OPENAI_BASE_URL the model's replies are\n" +
			"REPLAYED from a recorded script by a local OpenAI-protocol server that the demo starts (labelled [replay]);\n" +
			"with them set (or --live), the same flow runs on that model.\n\n" +
			"With --talk it plays one of the seed's five demos of pm talk instead (1 simple, 2 binding, 3 po-to-po,\n" +
			"4 self-modifying, 5 human-in-the-loop), in a fresh project with the files they explore: on a terminal\n" +
			"each scripted line waits in the input for Enter; piped (or --plain) the lines are sent, the questions\n" +
			"answered as scripted and the message log printed.",
		Example: `  pm demo                      the landing-page flow
  pm demo --talk               list the seed's five demos of pm talk
  pm demo --talk 2             play demo 2 (Semantic Binding) in pm talk
  pm demo --talk self-modifying`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				if !o.Talk {
					return errs.Usagef("pm demo --talk "+args[0], "a demo name needs --talk")
				}
				o.Which = args[0]
			}
			return run(f, o)
		},
	}
	c.Flags().BoolVar(&o.Talk, "talk", false, "play one of the seed's five demos (by number or name) in pm talk")
	c.Flags().BoolVar(&o.Plain, "plain", false, "with --talk: line mode even on a terminal (the default when stdout is not a terminal)")
	c.Flags().StringVar(&o.Dir, "dir", "", "directory for the demo project (default: a new temporary directory)")
	c.Flags().DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up after this long")
	c.Flags().BoolVar(&o.Live, "live", false, "require a real model provider (fail instead of replaying)")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	if o.Talk {
		return runTalk(f, o)
	}
	script, err := replay.Landing()
	if err != nil {
		return err
	}
	env, label, stop, err := provider(f, o, script)
	if err != nil {
		return err
	}
	defer stop()
	dir, err := workspace(o.Dir)
	if err != nil {
		return err
	}
	s, l, err := project(f, dir, env)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "%sproject %s (git repository, state in .plasmodium/)\n", label, dir)
	t, err := task.Create(s, l, store.Human, task.Spec{Description: Description, Runtime: config.RuntimeLLM})
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "%spm task %q -> %s, owner @%s\n", label, Description, t.ID, t.Owner)
	ctx, cancel := context.WithTimeout(f.Context, o.Timeout)
	defer cancel()
	end, err := follow(ctx, s, t.ID, f.IO.Out, label)
	if err != nil {
		return errs.Timeoutf("see pm log and pm logs NAME in "+dir, "demo did not finish: %v", err)
	}
	if end.Kind != bus.EvTaskDone {
		return errs.Failf("see pm logs in "+dir, "task ended: %s", end.Kind)
	}
	// The owner still takes its last model turn after pm done: the replay
	// server must outlive every agent of the task, or they fail on it.
	if err := waitAgents(ctx, l.State, t.ID); err != nil {
		return errs.Timeoutf("see pm agents --all in "+dir, "demo agents did not leave: %v", err)
	}
	return summary(f.IO.Out, s, l.State, t.ID, dir, label)
}

// provider is the environment that points the agents at a model: the
// caller's provider, or (none configured) a local OpenAI-protocol server
// replaying script, announced as a replay and closed by stop.
func provider(f *cmdutil.Factory, o Options, script *replay.Script) (env []string, label string, stop func(), err error) {
	live := f.Getenv("OPENAI_API_KEY") != "" || f.Getenv("OPENAI_BASE_URL") != ""
	if o.Live && !live {
		return nil, "", nil, errs.Failf("export OPENAI_API_KEY=... PM_MODEL=... (or OPENAI_BASE_URL for Ollama and friends)", "--live needs a model provider")
	}
	env = f.Environ()
	if live {
		return env, "", func() {}, nil
	}
	srv := openaitest.New(openaitest.WithModel("replay"))
	srv.Handle(replay.NewPlayer(script).Reply)
	label = "[replay] "
	env = append(env, "OPENAI_BASE_URL="+srv.BaseURL(), "PM_MODEL=replay")
	fmt.Fprintf(f.IO.Out, "%sREPLAY: no OPENAI_API_KEY/OPENAI_BASE_URL set, so the model's replies are played from a recorded\n%sscript (%s) by a local OpenAI-protocol server at %s. Everything else is real.\n",
		label, label, script.Title, srv.BaseURL())
	return env, label, srv.Close, nil
}

// project makes dir a pm project whose agents run with env.
func project(f *cmdutil.Factory, dir string, env []string) (*store.Store, *agent.Launcher, error) {
	root, _, err := store.Init(dir, f.Now)
	if err != nil {
		return nil, nil, err
	}
	s, err := store.Open(root)
	if err != nil {
		return nil, nil, err
	}
	s.Now, s.IDs, s.Warn = f.Now, f.IDs, f.IO.ErrOut
	l, err := f.Launcher(s)
	if err != nil {
		return nil, nil, err
	}
	l.Env = append(env, "PM_HOME="+root)
	return s, l, nil
}

// waitAgents blocks until no agent of the task is running: it watches the
// task (a phase opened, which is when role agents are made) and each of its
// agents' records, and watches again when the task has gained an agent.
func waitAgents(ctx context.Context, st state.State, taskID string) error {
	for {
		as, err := state.AgentsOf(st, taskID)
		if err != nil {
			return err
		}
		scopes := []state.Scope{{Task: taskID}}
		for _, a := range as {
			scopes = append(scopes, state.Scope{Agent: a.Name})
		}
		grew := false
		err = state.WatchAny(ctx, st, scopes, func() (bool, error) {
			now, err := state.AgentsOf(st, taskID)
			if err != nil {
				return false, err
			}
			if len(now) != len(as) {
				grew = true // watch the new one too
				return true, nil
			}
			for _, a := range now {
				if agent.Running(a) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil || !grew {
			return err
		}
	}
}

func workspace(dir string) (string, error) {
	if dir == "" {
		d, err := tempWorkspace()
		if err != nil {
			return "", err
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	// The demo writes a task, agents, files and a commit: never into a real
	// project, nor over a user's files.
	const try = "name a new or empty directory, or leave out --dir for a temporary one"
	if _, err := os.Stat(filepath.Join(dir, store.DirName)); err == nil {
		return "", errs.Usagef(try, "%s is already a pm project; the demo would replay into it and commit there", dir)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return "", errs.Usagef(try, "%s is not empty; the demo would write its files and commit there", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := gitx.InitRepository(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// follow prints the bus as the flow runs and returns the event that ended the task.
func follow(ctx context.Context, s *store.Store, taskID string, w io.Writer, label string) (bus.Event, error) {
	for d, err := range s.Bus().Subscribe(ctx, bus.Cursor{}) {
		if err != nil {
			return bus.Event{}, err
		}
		ev := d.Event
		if line := describe(ev); line != "" {
			fmt.Fprintf(w, "%s%s %s\n", label, ev.Time.Local().Format("15:04:05.000"), line)
		}
		if ev.TaskID == taskID && (ev.Kind == bus.EvTaskDone || ev.Kind == bus.EvTaskKilled) {
			return ev, nil
		}
	}
	return bus.Event{}, ctx.Err()
}

// describe is ev as one line of the demo's log, or "". Messages, tool calls
// and names can be model text (a live model): the line is escaped whole.
func describe(ev bus.Event) string { return render.Line(describeRaw(ev)) }

func describeRaw(ev bus.Event) string {
	switch ev.Kind {
	case bus.EvPhaseOpened:
		d, _ := ev.Data.(bus.PhaseOpened)
		return fmt.Sprintf("phase %s %q opened: limit %d, roles %s", ev.PhaseID, ev.Text, d.Limit, strings.Join(d.Roles, ", "))
	case bus.EvMessage:
		return fmt.Sprintf("@%s: %s", ev.Actor, ev.Text)
	case bus.EvPhaseClosed:
		d, _ := ev.Data.(bus.PhaseClosed)
		return fmt.Sprintf("phase %s closed (%s) %d/%d", ev.PhaseID, ev.Text, d.Messages, d.Limit)
	case bus.EvAgentStarted:
		d, _ := ev.Data.(bus.AgentStarted)
		return fmt.Sprintf("agent @%s started (pid %d)", ev.Agent, d.Pid)
	case bus.EvAgentExited:
		return fmt.Sprintf("agent @%s left", ev.Agent)
	case bus.EvAgentFailed:
		return fmt.Sprintf("agent @%s failed: %s", ev.Agent, ev.Text)
	case bus.EvToolCall:
		if strings.HasPrefix(ev.Text, "say ") || strings.HasPrefix(ev.Text, "chat ") {
			return ""
		}
		return fmt.Sprintf("@%s calls %s", ev.Actor, ev.Text)
	case bus.EvCommit:
		return fmt.Sprintf("git commit %s", ev.Text)
	case bus.EvMerge:
		d, _ := ev.Data.(bus.Merge)
		how := "merged"
		if d.FastForward {
			how = "fast-forwarded"
		}
		return fmt.Sprintf("git: %s's branch %s into %s at %s (%d files)", ev.TaskID, how, strings.TrimPrefix(d.Into, "refs/heads/"), ev.Text, d.Files)
	case bus.EvTaskDone:
		return fmt.Sprintf("task %s done", ev.TaskID)
	}
	return ""
}

func summary(w io.Writer, s *store.Store, st state.State, taskID, dir, label string) error {
	t, err := st.Task(taskID)
	if err != nil {
		return err
	}
	c, err := gitx.LastCommit(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%sgit log -1: %s %s\n", label, c.Hash[:12], render.Line(strings.TrimSpace(c.Message)))
	for _, f := range c.Files {
		fmt.Fprintf(w, "%s    %s (+%d)\n", label, render.Line(f.Name), f.Added)
	}
	fmt.Fprintf(w, "%sdone: %s %s; look around with PM_HOME=%s pm status --all, pm log, pm history --task %s (a temporary project is removed by the next pm demo)\n",
		label, t.ID, t.Status, s.Root, t.ID)
	return nil
}
