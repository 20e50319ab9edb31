package ops

import (
	"context"
	"fmt"

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
