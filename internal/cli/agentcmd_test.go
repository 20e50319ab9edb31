package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
)

func TestClientFiles(t *testing.T) {
	dir := t.TempDir()
	ctx := filepath.Join(dir, "ctx.md")
	if err := os.WriteFile(ctx, []byte("the context"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		want  []string
		input string // what the command reads on stdin; "" = the caller's
		err   string
	}{
		{"no file", []string{"say", "hi"}, []string{"say", "hi"}, "", ""},
		{"flag and value", []string{"subtask", "x", "--context-file", ctx, "--json"}, []string{"subtask", "x", "--json", "--context-file", "-"}, "the context", ""},
		{"flag=value", []string{"subtask", "--context-file=" + ctx, "x"}, []string{"subtask", "x", "--context-file", "-"}, "the context", ""},
		{"standard input stays", []string{"subtask", "x", "--context-file", "-"}, []string{"subtask", "x", "--context-file", "-"}, "", ""},
		{"after -- it is text", []string{"say", "--", "--context-file", ctx}, []string{"say", "--", "--context-file", ctx}, "", ""},
		{"a device is refused on the client", []string{"subtask", "x", "--context-file", "/dev/zero"}, nil, "", "not a regular file"},
		{"twice is refused (the host must never open the second)", []string{"subtask", "x", "--context-file", ctx, "--context-file", "/etc/shadow"}, nil, "", "more than once"},
		{"twice with = is refused", []string{"subtask", "--context-file=" + ctx, "--context-file=/etc/shadow", "x"}, nil, "", "more than once"},
		{"a missing file", []string{"subtask", "x", "--context-file", filepath.Join(dir, "nope")}, nil, "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caller := strings.NewReader("")
			args, in, err := clientFiles(tc.args, caller)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(args, tc.want) {
				t.Fatalf("args %q err %v, want %q", args, err, tc.want)
			}
			if tc.input == "" {
				if in != io.Reader(caller) {
					t.Fatal("the caller's input was replaced")
				}
				return
			}
			data, _ := io.ReadAll(in)
			if string(data) != tc.input {
				t.Fatalf("input %q, want %q", data, tc.input)
			}
		})
	}
}

func agentFactory(errOut io.Writer) *cmdutil.Factory {
	return &cmdutil.Factory{IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: errOut}, Context: context.Background(),
		Getenv: func(string) string { return "" }}
}

func TestRunAgentRefuses(t *testing.T) {
	for _, args := range [][]string{{"init"}, {"dashboard"}, {"top"}, {"talk", "greeter"}, {"demo"}, {"supervise"},
		{"agent-run", "oak"}, {"mcp", "--http", "127.0.0.1:0"}, {"mcp", "--http=127.0.0.1:0"},
		// Issue 20: a flag before the command, taken by cobra as a flag and
		// its value, hid the command from a filter that read names.
		{"--addr", "127.0.0.1:0", "dashboard"}, {"--dir", "./d", "demo"}, {"--agent", "claude", "init"}, {"--plain", "greeter", "talk"},
		{"task", "x"}, {"reset", "--force"}, {"design", "f.go", "--goal", "g"}, {"config", "set", "limits.active_tasks", "9"},
		{"completion", "bash"}, {"__complete", "say", ""}, {"subtask", "x", "--context-file", "/etc/passwd"},
		{"subtask", "--context-file=/etc/passwd", "x"},
		// Issue 24: the host is unconfined; an agent that had it mint a
		// machine's credential (or revoke one) would hold the hub.
		{"hub"}, {"hub", "--accounts"}, {"hub", "creds", "--project", "p", "--name", "evil"},
		{"hub", "creds", "--revoke", "--project", "p", "--name", "m1"}, {"hub", "creds", "--list"}} {
		var errOut bytes.Buffer
		code := RunAgent(agentFactory(&errOut), args)
		if code != 5 || !strings.Contains(errOut.String(), "not available to agents") || !strings.Contains(errOut.String(), "Try:") {
			t.Errorf("pm %q: exit %d, %q", args, code, errOut.String())
		}
	}
}

// TestAgentRefusesFlagFirst spells every command flag-first with the flags
// of every command (--x v cmd, --x=v cmd, -x v cmd, and as a bool): a
// command not for agents is refused whatever comes before it, and one for
// agents is refused too (its name must come first).
func TestAgentRefusesFlagFirst(t *testing.T) {
	root := NewRoot(agentFactory(io.Discard))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var cmds [][]string
	flags := map[string]*pflag.Flag{}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = f })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = f })
		for _, sub := range c.Commands() {
			p := append(slices.Clip(path), sub.Name())
			cmds = append(cmds, p)
			walk(sub, p)
		}
	}
	walk(root, nil)
	if _, ok := flags["help"]; !ok {
		flags["help"] = &pflag.Flag{Name: "help", Shorthand: "h"}
	}
	var denied, tried int
	for _, cmd := range cmds {
		if !agentCommands[strings.Join(cmd, " ")] {
			denied++
		}
		for _, f := range flags {
			spellings := [][]string{{"--" + f.Name, "v"}, {"--" + f.Name + "=v"}, {"--" + f.Name}}
			if f.Shorthand != "" {
				spellings = append(spellings, []string{"-" + f.Shorthand, "v"}, []string{"-" + f.Shorthand})
			}
			for _, pre := range spellings {
				args := append(slices.Clip(pre), cmd...)
				tried++
				err := agentRefusal(NewRoot(agentFactory(io.Discard)), args)
				if err == nil {
					t.Errorf("pm %q was allowed", args)
					continue
				}
				if c := errs.CodeOf(err); c != errs.State && c != errs.Usage {
					t.Errorf("pm %q: exit %d (%v), want 5 or 2", args, c, err)
				}
			}
		}
	}
	if denied < 10 || tried < 1000 {
		t.Fatalf("only %d commands denied, %d lines tried: the walk missed the tree", denied, tried)
	}
}

func TestAgentAllows(t *testing.T) {
	for _, args := range [][]string{nil, {}, {"--help"}, {"--version"}, {"say", "hi"}, {"say", "--", "--dir", "x"}, {"status", "--json"},
		{"subtask", "x", "--context-file", "-"}, {"mcp"}, {"mcp", "--tools", "po"}, {"help", "say"}, {"say", "--help"},
		{"config", "get", "model.name"}, {"config", "list"}, {"chat", "--follow"}, {"wait", "tk-000000", "--timeout=1s"}, {"done"}} {
		if err := agentRefusal(NewRoot(agentFactory(io.Discard)), args); err != nil {
			t.Errorf("pm %q refused: %v", args, err)
		}
	}
}

// A request with no arguments (JSON null from a client) runs pm's help,
// never the command line of the process it runs in: cobra reads os.Args
// for nil arguments, which in a host are its own "agent-run NAME".
func TestRunNilArgs(t *testing.T) {
	saved := os.Args
	t.Cleanup(func() { os.Args = saved })
	os.Args = []string{"pm-full", "agent-run"} // a host's, short of its NAME: cobra refuses it before running
	var out, errOut bytes.Buffer
	f := agentFactory(&errOut)
	f.IO.Out = &out
	if code := RunAgent(f, nil); code != 0 || !strings.Contains(out.String(), "Usage:") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// FuzzAgentRefusal compares the broker's decision with what cobra really
// runs for the same arguments (a tree whose commands only record that they
// ran): what cobra runs is never a command outside agentCommands, nor one
// given a hostPlaces flag, unless the decision refused the line.
func FuzzAgentRefusal(f *testing.F) {
	for _, seed := range []string{"", "say\x00hi", "--addr\x00127.0.0.1:0\x00dashboard", "--dir\x00./d\x00demo", "--agent\x00claude\x00init",
		"--plain\x00greeter\x00talk", "-h\x00dashboard", "--help\x00dashboard", "mcp\x00--http\x00:0", "--\x00dashboard", "__complete\x00say\x00",
		"\x00dashboard", "help\x00init", "config\x00--json\x00set\x00a\x00b", "subtask\x00x\x00--context-file=/etc/passwd", "--json\x00status",
		"-n\x003\x00history", "completion\x00bash", "status\x00--json"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		if len(args) > 8 {
			return
		}
		refusal := agentRefusal(NewRoot(agentFactory(io.Discard)), slices.Clone(args))
		ran, flags := cobraRuns(t, args)
		if ran == nil {
			return
		}
		path := commandPath(ran)
		if !agentCommands[path] && refusal == nil {
			t.Fatalf("pm %q: cobra runs %q, not for agents, and the broker allowed it", args, path)
		}
		for _, fl := range flags {
			if hostPlaces[fl.Name] && !(fl.Name == "context-file" && fl.Value.String() == "-") && refusal == nil {
				t.Fatalf("pm %q: cobra runs %q with --%s=%s, and the broker allowed it", args, path, fl.Name, fl.Value)
			}
		}
		if refusal == nil && path != "" {
			if n := len(strings.Fields(path)); len(args) < n || strings.Join(args[:n], " ") != path {
				t.Fatalf("pm %q: allowed though %q does not start it", args, path)
			}
		}
	})
}

// cobraRuns executes args on a command tree like Run's whose commands only
// record that they ran, and returns the one that ran (nil: none did) and
// the flags it was given.
func cobraRuns(t *testing.T, args []string) (*cobra.Command, []*pflag.Flag) {
	t.Helper()
	root := NewRoot(agentFactory(io.Discard))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var ran *cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.PreRunE, c.PreRun, c.PersistentPreRunE, c.PersistentPreRun = nil, nil, nil, nil
		if c.Runnable() {
			c.Run = nil
			c.RunE = func(c *cobra.Command, _ []string) error { ran = c; return nil }
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	root.SetArgs(append([]string{}, args...))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	cmd, err := root.ExecuteC()
	if ran == nil && err == nil && cmd != nil && strings.HasPrefix(cmd.Name(), "__complete") {
		ran = cmd // created inside ExecuteC, so never replaced above: it ran
	}
	if ran == nil {
		return nil, nil
	}
	var flags []*pflag.Flag
	ran.Flags().Visit(func(f *pflag.Flag) { flags = append(flags, f) })
	return ran, flags
}

func commandPath(c *cobra.Command) string {
	var names []string
	for ; c.HasParent(); c = c.Parent() {
		names = append([]string{c.Name()}, names...)
	}
	return strings.Join(names, " ")
}
