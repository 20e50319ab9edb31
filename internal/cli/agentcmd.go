package cli

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/ops"
)

// agentCommands are the commands a host runs for its agent, by path (the
// words after "pm"). Deny by default: a command that is not listed here is
// not available to agents, whatever it does, until it is added. Listed:
// what docs/spec.md gives agents (all agents, owners, prompt objects,
// waiting) and the read commands that show an agent its own project; each
// checks identity in ops. Not listed: what serves people or makes state
// outside ops' identity checks (init, task, reset, config set|unset,
// dashboard, top, talk, demo, design, completion) and pm's own processes
// (supervise, agent-run).
var agentCommands = map[string]bool{
	"":     true, // pm alone, --help or --version: its help
	"help": true, "status": true, "agents": true, "logs": true, "log": true, "requests": true,
	"answer": true, "wait": true, "kill": true, "config": true, "config get": true, "config list": true,
	"chat": true, "say": true, "history": true,
	"prompts": true, "send": true, "stop": true, "tools": true, "mcp": true, "designs": true,
	"phase": true, "extend-phase": true, "end-phase": true, "subtask": true, "wait-children": true, "done": true,
}

// hostPlaces are flags whose value names a place on the host's side: a
// directory it works in, a file it opens, an address it listens on. The
// host is unconfined and runs as the human, so none is taken from an agent,
// on any command (pm mcp --http would serve anyone as this agent; pm demo
// --dir makes a project where the agent writes its config). One exception:
// --context-file - (standard input), which is how the client passes the
// file it read with the agent's rights (clientFiles).
var hostPlaces = map[string]bool{"dir": true, "addr": true, "http": true, "eval": true, "context-file": true}

// RunAgent runs one command line for the agent a host brokers for (f's
// identity is that agent): the same command tree as Run, when agentRefusal
// allows the line.
func RunAgent(f *cmdutil.Factory, args []string) int {
	if err := agentRefusal(NewRoot(f), args); err != nil {
		return report(f.IO.ErrOut, err)
	}
	return Run(f, args)
}

// agentRefusal decides whether a host runs args for its agent, on the
// command cobra would run for them: root (a tree built like Run's, used
// for nothing else: parsing sets its flags) resolves args exactly as
// Execute does. It refuses, with the reason, a command not in
// agentCommands, a flag before the command's name (cobra takes
// `--unknown VALUE` before a command as a flag and its value, so a
// filter reading names alone is bypassed), any flag inherited from a
// parent command, and the hostPlaces flags.
func agentRefusal(root *cobra.Command, args []string) error {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// Execute adds this one for such a line only.
		return errs.Statef("run it yourself outside the agent, as the human", "pm %s is not available to agents", args[0])
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return usageError(err) // Execute fails the same way, before running anything
	}
	var chain []*cobra.Command
	for c := cmd; c != root; c = c.Parent() {
		chain = append([]*cobra.Command{c}, chain...)
	}
	names := make([]string, len(chain))
	for i, c := range chain {
		names[i] = c.Name()
	}
	path := strings.Join(names, " ")
	if !agentCommands[path] {
		return errs.Statef("run it yourself outside the agent, as the human", "pm %s is not available to agents", path)
	}
	if cmd == root {
		if len(args) == 0 || len(args) == 1 && slices.Contains([]string{"-h", "--help", "--version"}, args[0]) {
			return nil
		}
		return flagFirst(names, args)
	}
	for i := range chain {
		if i >= len(args) || args[i] != names[i] {
			return flagFirst(names, args)
		}
	}
	cmd.InitDefaultHelpFlag() // as Execute does before it parses
	cmd.InitDefaultVersionFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return cmd.FlagErrorFunc()(cmd, err) // Execute's refusal of a bad flag
	}
	inherited := cmd.InheritedFlags()
	var refusal error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch {
		case refusal != nil:
		case fl.Name == "context-file" && fl.Value.String() == "-":
		case hostPlaces[fl.Name]:
			refusal = errs.Statef("run it yourself outside the agent, as the human",
				"pm %s --%s is not available to agents: the host never works in, opens or listens on a place an agent names", path, fl.Name)
		case inherited.Lookup(fl.Name) != nil && fl.Name != "help":
			refusal = errs.Statef("leave out --"+fl.Name, "--%s (a flag of every command) is not available to agents", fl.Name)
		}
	})
	return refusal
}

// flagFirst refuses a command line that does not start with its command's
// name: whatever comes before it is not for agents.
func flagFirst(names, args []string) error {
	try := "pm COMMAND [ARGS] [FLAGS]: the command's name first, e.g. pm status --json"
	if len(names) > 0 {
		try = "pm " + strings.Join(names, " ") + " [ARGS] [FLAGS]: the command's name first"
	}
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	return errs.Usagef(try, "%q before the command's name is not available to agents", first)
}

// forward sends the command line to the agent's host when the environment
// names one (broker.SocketEnv and broker.TokenEnv): an exec agent's pm
// commands run there, as that agent, never on the state directory here.
func forward(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, bool) {
	sock, tok := os.Getenv(broker.SocketEnv), os.Getenv(broker.TokenEnv)
	if sock == "" || tok == "" {
		return 0, false
	}
	args, stdin, err := clientFiles(args, stdin)
	if err != nil {
		return report(stderr, err), true
	}
	return lite.Forward(ctx, sock, tok, args, stdin, stdout, stderr), true
}

// clientFiles reads the files a command line names on the client's side,
// with the client's rights, so the host never opens a path an agent chose:
// `--context-file PATH` becomes `--context-file -` with the file as input.
func clientFiles(args []string, stdin io.Reader) ([]string, io.Reader, error) {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		var path string
		switch a := out[i]; {
		case a == "--":
			return out, stdin, nil
		case a == "--context-file" && i+1 < len(out):
			path = out[i+1]
			out = append(out[:i], out[i+2:]...)
		case strings.HasPrefix(a, "--context-file="):
			path = strings.TrimPrefix(a, "--context-file=")
			out = append(out[:i], out[i+1:]...)
		default:
			continue
		}
		rest := out[i:]
		if end := slices.Index(rest, "--"); end >= 0 {
			rest = rest[:end] // after --, words are text
		}
		if slices.ContainsFunc(rest, func(a string) bool { return a == "--context-file" || strings.HasPrefix(a, "--context-file=") }) {
			return nil, nil, errs.Usagef("give one context file", "--context-file given more than once")
		}
		if path == "-" {
			return append(out, "--context-file", "-"), stdin, nil
		}
		text, err := ops.ReadContextFile(path)
		if err != nil {
			return nil, nil, err
		}
		return append(out, "--context-file", "-"), strings.NewReader(text), nil
	}
	return out, stdin, nil
}
