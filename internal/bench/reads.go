package bench

import (
	"context"
	"fmt"
	"strings"
)

// ReadCase is one read command timed against a large state.
type ReadCase struct {
	Name  string
	Agent string
	Args  []string
	Goal  bool // one of the commands with the < 100 ms goal
	Times Durations
}

// Reads generates a state of spec's size under dir and times each read
// command runs times (after one untimed warm-up run, so the page cache is
// warm, as it is for a user running commands in a loop).
func Reads(ctx context.Context, bin, dir string, spec StateSpec, runs int) ([]ReadCase, error) {
	st, err := Generate(dir, spec)
	if err != nil {
		return nil, err
	}
	p := &PM{Bin: bin, Dir: dir, Env: Env(dir), Home: st.Root}
	cases := []ReadCase{
		{Name: "pm --help (start-up floor)", Args: []string{"--help"}},
		{Name: "pm status", Goal: true, Args: []string{"status"}},
		{Name: "pm status tk-.. (a done task)", Goal: true, Args: []string{"status", st.SomeTask}},
		{Name: "pm status (as the owner agent: its task)", Goal: true, Agent: st.Owner, Args: []string{"status"}},
		{Name: "pm chat (human: finds the only active phase)", Goal: true, Args: []string{"chat"}},
		{Name: "pm chat (as the owner agent)", Goal: true, Agent: st.Owner, Args: []string{"chat"}},
		{Name: "pm log -n 50", Goal: true, Args: []string{"log", "-n", "50"}},
		{Name: "pm status --all --json (prints every task)", Args: []string{"status", "--all", "--json"}},
	}
	for i := range cases {
		c := &cases[i]
		out, _, err := p.Run(ctx, c.Agent, c.Args...)
		if err != nil {
			return nil, err
		}
		if err := checkRead(c.Agent, c.Args, out, spec); err != nil {
			return nil, err
		}
		if c.Times, err = p.Time(ctx, runs, c.Agent, c.Args...); err != nil {
			return nil, err
		}
	}
	return cases, nil
}

// checkRead makes sure a timed command did its real work.
func checkRead(agent string, args []string, out string, spec StateSpec) error {
	switch args[0] {
	case "status":
		if len(args) == 1 && agent == "" && !strings.Contains(out, fmt.Sprintf("%d tasks", spec.Tasks)) {
			return fmt.Errorf("pm status: want %d tasks in its output, got %q", spec.Tasks, out)
		}
	case "log":
		if n := strings.Count(out, "\n"); n != 50 {
			return fmt.Errorf("pm log -n 50 printed %d lines", n)
		}
	case "chat":
		if n := strings.Count(out, "\n"); n < spec.MessagesPerPhase {
			return fmt.Errorf("pm chat printed %d lines, want at least %d", n, spec.MessagesPerPhase)
		}
	}
	return nil
}
