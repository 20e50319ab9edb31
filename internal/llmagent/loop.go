package llmagent

import (
	"context"
	"fmt"
	"slices"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/inbox"
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

// cascade checks a call from a to prompt object `to` against the cascade
// it would extend (inbox.Chain): if `to` is already in it (A → B → A), it
// is waiting for this very chain to answer, and a resident answers one
// request at a time, so the call could never be answered. The human is
// asked: "yes" sends it anyway, "stop" stops the agent (stop), anything
// else refuses it with their words.
func (r *Runner) cascade(ctx context.Context, a *store.Agent, to string, stop context.CancelCauseFunc) error {
	if r.Store.Config().Governance.Loop.Repeat <= 0 {
		return nil
	}
	chain := inbox.Chain(r.State, a.Name, bus.CauseOf(ctx))
	if !slices.Contains(chain, to) {
		return nil
	}
	path := "@" + to
	for _, n := range chain {
		path = "@" + n + " → " + path
		if n == to {
			break
		}
	}
	evidence := fmt.Sprintf("it calls @%s, which is waiting for this chain of calls to answer (%s): a prompt object answers one request at a time, so @%s cannot answer it", to, path, to)
	sess := &ops.Session{Store: r.Store, State: r.State, Actor: store.Actor{Name: a.Name, Agent: a}, Launcher: r.Launcher, Getenv: r.Getenv}
	v, why, err := ops.LoopPause(ctx, sess, evidence)
	switch {
	case err != nil:
		return err
	case v == request.Allow:
		return nil
	case v == request.Stop:
		le := &LoopError{Reason: ops.LoopStopReason(evidence)}
		stop(le)
		return le
	}
	return errs.Limitf("answer from what you know, or as the human says", "loop: %s; the human says: %s", path, why)
}
