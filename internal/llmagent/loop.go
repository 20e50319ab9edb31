package llmagent

import (
	"context"
	"fmt"

	"github.com/plasmodium/pm/internal/agent"
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
		r.activity(a.Name, agent.ActivityWaiting)
		defer r.activity(a.Name, agent.ActivityWorking)
		sess := &ops.Session{Store: r.Store, State: r.State, Actor: store.Actor{Name: a.Name, Agent: a}, Launcher: r.Launcher, Getenv: r.Getenv}
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

// LoopError is the loop breaker's stop for a pattern other than a repeated
// call (a cascade of calls back to a waiting object, phases without
// progress): the human said stop. Reason is ops.LoopStopReason's, as an
// exec agent's record says it.
type LoopError struct{ Reason string }

func (e *LoopError) Error() string { return e.Reason }

// cascade checks a call from a to prompt object `to` with the loop
// breaker's one cascade check (ops.CheckCascade, as for an exec agent's pm
// send): the human's "stop" ends this run (stop, with a LoopError).
func (r *Runner) cascade(ctx context.Context, a *store.Agent, to string, stop context.CancelCauseFunc) error {
	sess := &ops.Session{Store: r.Store, State: r.State, Actor: store.Actor{Name: a.Name, Agent: a}, Launcher: r.Launcher, Getenv: r.Getenv,
		Halt: func(reason string) { stop(&LoopError{Reason: reason}) }}
	return ops.CheckCascade(ctx, sess, to)
}
