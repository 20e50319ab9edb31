package llmagent

import (
	"context"
	"fmt"

	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/loopguard"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/store"
)

// loopBreaker arms the loop's breaker for repeated tool calls with
// governance.loop.repeat (0: off): a held call pauses the agent on a
// request to the human (ops.LoopPause).
func (r *Runner) loopBreaker(a *store.Agent, loop *llm.Loop) {
	n := r.Store.Config().Governance.Loop.Repeat
	if n <= 0 {
		return
	}
	loop.Repeats = &loopguard.Guard{Limit: n}
	loop.OnRepeat = func(ctx context.Context, h loopguard.Hit) (string, error) {
		r.activity(a.Name, "waiting")
		defer r.activity(a.Name, "working")
		sess := &ops.Session{Store: r.Store, Actor: store.Actor{Name: a.Name, Agent: a}, Launcher: r.Launcher, Getenv: r.Getenv}
		evidence := fmt.Sprintf("it called %s %s in a row with the same arguments %s and got the same result each time, and calls it again",
			h.Name, llm.Times(h.Times), clip(h.Args, 300))
		v, why, err := ops.LoopPause(ctx, sess, evidence)
		switch {
		case err != nil:
			return "", err
		case v == request.Allow:
			return "", nil
		case v == request.Stop:
			return "", &llm.RepeatError{Hit: h, Reason: "stopped by the human"}
		}
		return fmt.Sprintf("error: not run: you made this call %s in a row with the same result; the human says: %s", llm.Times(h.Times), why), nil
	}
}
