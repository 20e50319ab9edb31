package agentrun

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/loopguard"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// guardRepeats is the loop breaker for an exec agent, where pm can see its
// work: the pm commands its broker runs. A command line run limit-1 times
// in a row with the same output and exit code pauses the next identical
// one on a request to the human (ops.LoopPause, as for an llm agent's tool
// calls); "yes" runs it, anything else refuses it (exit 3) with the
// human's words, which the agent reads on its stderr, and "stop" also
// halts the agent (its host ends the CLI). limit 0: off.
func guardRepeats(s *store.Store, st state.State, name string, limit int, halt func(string), run broker.Runner) broker.Runner {
	if limit <= 0 {
		return run
	}
	g := &loopguard.Guard{Limit: limit}
	return func(ctx context.Context, args []string, stdio broker.Stdio) int {
		line, _ := json.Marshal(args)
		if h, hit := g.Check("pm", string(line)); hit {
			if code, refused := pauseRepeat(ctx, s, st, name, halt, h, stdio.Err); refused {
				return code
			}
			g.Reset()
		}
		out, errOut := sha256.New(), sha256.New()
		stdio.Out = io.MultiWriter(stdio.Out, out)
		stdio.Err = io.MultiWriter(stdio.Err, errOut)
		code := run(ctx, args, stdio)
		g.Record("pm", string(line), fmt.Sprintf("%x %x %d", out.Sum(nil), errOut.Sum(nil), code))
		return code
	}
}

// pauseRepeat asks the human about a repeated command: refused reports
// that the command must not run, with its exit code.
func pauseRepeat(ctx context.Context, s *store.Store, st state.State, name string, halt func(string), h loopguard.Hit, stderr io.Writer) (int, bool) {
	var cmdline []string
	_ = json.Unmarshal([]byte(h.Args), &cmdline)
	a, err := st.Agent(name)
	if err != nil {
		return lite.Report(stderr, err), true
	}
	sess := &ops.Session{Store: s, State: st, Actor: store.Actor{Name: name, Agent: a}, Halt: halt}
	evidence := fmt.Sprintf("it ran `pm %s` %s in a row with the same output and exit code, and runs it again", shellLine(cmdline), llm.Times(h.Times))
	v, why, err := ops.LoopPause(ctx, sess, evidence)
	switch {
	case err != nil:
		return lite.Report(stderr, err), true
	case v == request.Allow:
		return 0, false
	case v == request.Stop:
		why = "stop working on this and end your turn (your run is being ended)"
	}
	return lite.Report(stderr, errs.Limitf("do what the human says, or something else than this command",
		"loop: you ran this command %s in a row with the same result; the human says: %s", llm.Times(h.Times), why)), true
}

// shellLine is args as one line for a person.
func shellLine(args []string) string {
	b, _ := json.Marshal(args)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
