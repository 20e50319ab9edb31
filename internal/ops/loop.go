package ops

import (
	"context"
	"fmt"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/loopguard"
	"github.com/plasmodium/pm/internal/request"
)

// LoopStopReason is what an agent the human stopped at the loop breaker
// is recorded failed with.
func LoopStopReason(evidence string) string {
	return "stopped by the human (loop breaker): " + evidence
}

// LoopPause is the loop breaker's one way to stop an agent that repeats
// itself (a tool call, a pm command, phases without progress): it asks the
// human with the evidence and waits, as long as it takes, for the verdict:
// Allow (go on), Stop, or Deny with the human's words for the agent. On
// Stop it halts the agent through its host when the session can
// (Session.Halt: an exec agent), with the evidence as the reason.
func LoopPause(ctx context.Context, sess *Session, evidence string) (request.Verdict, string, error) {
	q := fmt.Sprintf("@%s looks stuck: %s. Answer \"yes\" to let it go on, \"stop\" to stop it, "+
		"or anything else to tell it what to do instead (it gets your answer in place of the call).", sess.Actor.Name, evidence)
	r, err := request.Decide(ctx, sess.Store, sess.State, sess.Actor, request.Decision{Kind: request.KindLoop, Question: q})
	if err != nil {
		return request.Deny, "", err
	}
	v, why := request.ParseVerdict(r.Answer)
	if v == request.AllowAlways {
		v = request.Allow
	}
	if v == request.Stop && sess.Halt != nil {
		sess.Halt(LoopStopReason(evidence))
	}
	return v, why, nil
}

// CheckCascade is the loop breaker's check of a call from the session's
// agent to prompt object `to`, for every runtime (an llm agent's tool, an
// exec agent's pm send through its broker, MCP's send): if `to` is already
// waiting for the cascade the call would extend (inbox.Chains; A → B → A),
// it could never be answered, and the human is asked before it is sent
// (LoopPause). "yes" sends it; "stop" refuses it and halts the agent
// (Session.Halt); any other answer refuses it with the human's words.
// governance.loop.repeat 0 turns it off with the rest of the breaker.
func CheckCascade(ctx context.Context, sess *Session, to string) error {
	if sess.Store.Config().Governance.Loop.Repeat <= 0 || sess.Actor.Name == "human" {
		return nil
	}
	for _, chain := range inbox.Chains(sess.State, sess.Actor.Name, bus.CauseOf(ctx)) {
		path, hit := loopguard.Cascade(chain, to)
		if !hit {
			continue
		}
		evidence := fmt.Sprintf("it calls @%s, which is waiting for this chain of calls to answer (%s): "+
			"@%s cannot answer it until the chain returns", to, path, to)
		v, why, err := LoopPause(ctx, sess, evidence)
		switch {
		case err != nil:
			return err
		case v == request.Allow:
			return nil
		case v == request.Stop:
			why = "stop working on this and end your turn (your run is being ended)"
		}
		return errs.Limitf("answer from what you know, or as the human says", "loop: %s; the human says: %s", path, why)
	}
	return nil
}
