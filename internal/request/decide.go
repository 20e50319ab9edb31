package request

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Kinds of request besides an agent's question (ask_human, Kind "").
const (
	KindLoop    = "loop"    // the loop breaker paused an agent
	KindConfirm = "confirm" // a call waits for confirmation
)

// Verdict is what an answer to a decision means.
type Verdict int

const (
	Deny        Verdict = iota // no: the agent is told why (the answer)
	Allow                      // yes: this once
	AllowAlways                // always: for the rest of the task (confirmations)
	Stop                       // stop: the agent stops
)

// ParseVerdict reads an answer: yes (y, ok, allow, approve), always (for
// the rest of the task), stop, or anything else, a denial whose text is
// the reason the agent is told.
func ParseVerdict(answer string) (Verdict, string) {
	a := strings.ToLower(strings.TrimSpace(answer))
	a = strings.TrimRight(a, ".!")
	switch a {
	case "y", "yes", "ok", "allow", "approve", "approved", "go on", "continue":
		return Allow, ""
	case "always", "yes always", "approve always", "allow always", "a":
		return AllowAlways, ""
	case "stop":
		return Stop, ""
	}
	return Deny, strings.TrimSpace(answer)
}

// Decision is a yes/no request to the human.
type Decision struct {
	Kind     string
	Question string
	Confirm  *store.ConfirmCall
	// Timeout: unanswered by then, pm answers it "no (timed out ...)" and
	// it counts as denied. 0: it waits as long as ctx.
	Timeout time.Duration
}

// Decide records d as a pending request from actor, announces it like any
// request (pm requests, pm answer, the dashboard, pm top, MCP) and waits
// for the answer or d.Timeout. If ctx ends first, pm answers it "no (the
// agent stopped waiting)": a decision nobody waits on is not left pending.
func Decide(ctx context.Context, s *store.Store, st state.State, actor store.Actor, d Decision) (*Request, error) {
	if err := checkText("question", d.Question); err != nil {
		return nil, err
	}
	r := &Request{From: actor.Name, Question: d.Question, Status: Pending, CreatedAt: s.Now().UTC(), Kind: d.Kind, Confirm: d.Confirm}
	if actor.Agent != nil {
		r.TaskID = actor.Agent.TaskID
	}
	if err := st.CreateRequest(r); err != nil {
		return nil, err
	}
	data := bus.RequestAsked{Request: r.ID, Kind: string(d.Kind), Cause: bus.CauseOf(ctx)}
	s.Notify(bus.Event{Kind: bus.EvRequestAsked, Actor: actor.Name, TaskID: r.TaskID, Agent: actor.Name, Text: d.Question, Data: data})
	wctx := ctx
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	done, err := Wait(wctx, s, st, r.ID)
	if err == nil {
		return done, nil
	}
	if ctx.Err() != nil {
		// The asker stopped waiting (stopped, its room closed): nobody
		// will act on an answer, so the request is not left pending.
		_, _ = Answer(s, st, store.Actor{Name: "pm"}, r.ID, "no (the agent stopped waiting)")
		return nil, err
	}
	if !errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return nil, err
	}
	// Timed out: pm answers it, unless the human just did.
	ans, aerr := Answer(s, st, store.Actor{Name: "pm"}, r.ID, fmt.Sprintf("no (timed out: unanswered after %s)", d.Timeout))
	if errs.Is(aerr, errs.State) {
		return Get(s, st, r.ID)
	}
	return ans, aerr
}
