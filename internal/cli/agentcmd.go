package cli

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/ops"
)

// notForAgents are the commands a host does not run for its agent: they
// serve people (a terminal UI, a web server, a demo), make state, or are
// pm's own processes. (pm mcp over stdio is served; --http is not: a
// listener in the host would serve anyone as this agent.)
var notForAgents = map[string]bool{
	"init": true, "dashboard": true, "top": true, "talk": true, "demo": true,
	"supervise": true, "agent-run": true,
}

// RunAgent runs one command line for the agent a host brokers for (f's
// identity is that agent): the same command tree as Run, minus notForAgents.
func RunAgent(f *cmdutil.Factory, args []string) int {
	name := commandName(args)
	if name == "mcp" && slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--http") }) {
		name = "mcp --http"
	}
	if notForAgents[name] || name == "mcp --http" {
		return report(f.IO.ErrOut, errs.Statef("run it yourself outside the agent, as the human",
			"pm %s is not available to agents", name))
	}
	return Run(f, args)
}

// commandName is the first argument that is not a flag.
func commandName(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
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
