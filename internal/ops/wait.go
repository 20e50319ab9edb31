package ops

import (
	"context"
	"errors"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// WaitInput is pm wait.
type WaitInput struct {
	Task    string `json:"task" jsonschema:"task id tk-... to wait for"`
	Timeout string `json:"timeout,omitempty" jsonschema:"give up after this long, e.g. \"30m\" (default: no limit)"`
}

// WaitResult is the task as the wait ended, with its health.
type WaitResult struct {
	Task   *store.Task `json:"task"`
	Health task.Health `json:"health"`
}

// Partial: a stalled, killed or timed-out wait still reports the task.
func (r WaitResult) Partial() bool { return r.Task != nil }

// Wait blocks until the task is done (no error), killed (exit 5), stalled
// (exit 1: its owner failed or exited without pm done, nobody works on it)
// or Timeout passes (exit 124). It wakes on the bus, never on a timer.
func Wait(ctx context.Context, sess *Session, in WaitInput) (WaitResult, error) {
	d, err := parseTimeout(in.Timeout)
	if err != nil {
		return WaitResult{}, err
	}
	if in.Task, err = state.CompleteID(sess.State, ids.Task, in.Task); err != nil {
		return WaitResult{}, err
	}
	if _, err := sess.State.Task(in.Task); err != nil {
		return WaitResult{}, err
	}
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	defer sess.KeepSupervisor(ctx)()
	var res WaitResult
	check := func() (bool, error) {
		t, err := sess.State.Task(in.Task)
		if err != nil {
			return false, err
		}
		res = WaitResult{Task: t, Health: task.HealthOf(sess.Store, sess.State, t, nil)}
		if settleSeen(sess, res.Health) {
			if t, err = sess.State.Task(in.Task); err != nil {
				return false, err
			}
			res = WaitResult{Task: t, Health: task.HealthOf(sess.Store, sess.State, t, nil)}
		}
		switch res.Health.State {
		case task.StateDone, task.StateKilled, task.StateStalled, task.StateReview, task.StateConflict, task.StateMergeWaits:
			return true, nil
		}
		return false, nil
	}
	err = untilEvent(ctx, sess.Store, check)
	if errors.Is(err, context.DeadlineExceeded) {
		return res, errs.Timeoutf("wait again, or see what it does with pm status "+in.Task, "%s still %s after %s", in.Task, res.Health.State, in.Timeout)
	}
	if err != nil {
		return res, err
	}
	switch res.Health.State {
	case task.StateKilled:
		return res, errs.Statef("pm kill "+in.Task+" --restart starts it again", "%s was killed", in.Task)
	case task.StateStalled:
		return res, errs.Failf(res.Health.Next, "%s is stalled: %s", in.Task, res.Health.Reason)
	case task.StateConflict, task.StateMergeWaits:
		// Its merge waits for a decision (done, held for review, is done).
		return res, errs.Statef(res.Health.Next, "%s", res.Health.Reason)
	}
	return res, nil
}

// WaitPhase blocks until the task has an active phase and returns it: what
// pm chat --follow watches when the owner has not opened one yet. A task
// that ends first is exit 5.
func WaitPhase(ctx context.Context, sess *Session, taskID string) (*store.Phase, error) {
	var ph *store.Phase
	var ended *store.Task
	err := untilEvent(ctx, sess.Store, func() (bool, error) {
		t, err := sess.State.Task(taskID)
		if err != nil {
			return false, err
		}
		if ph, err = state.ActivePhase(sess.State, taskID); err != nil || ph != nil {
			return ph != nil, err
		}
		if !t.Live() {
			ended = t
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if ended != nil {
		return nil, errs.Statef("pm status "+taskID+" shows its phases", "%s is %s; no phase will open", taskID, ended.Status)
	}
	return ph, nil
}

// untilEvent calls check now and after every bus event until it reports
// done. The cursor is taken before the first check, so an event between
// the check and the subscription is not missed.
func untilEvent(ctx context.Context, s *store.Store, check func() (bool, error)) error {
	b := s.Bus()
	_, end, err := b.Tail(0)
	if err != nil {
		return err
	}
	if ok, err := check(); ok || err != nil {
		return err
	}
	for d, err := range b.Subscribe(ctx, end) {
		if err != nil {
			return err
		}
		if !ChangesState(d.Event.Kind) {
			continue
		}
		if ok, err := check(); ok || err != nil {
			return err
		}
	}
	return ctx.Err()
}

// ChangesState reports whether an event of kind k may change a task's
// state: `pm wait` checks again, and the dashboard sends the task's health,
// only after these. It names the kinds that do (task, phase and agent
// lifecycle, requests, commits, reset) rather than those that do not, so a
// kind added later (talk, streamed text, design steps) wakes nobody until it
// is listed here.
func ChangesState(k bus.Kind) bool {
	switch k {
	case bus.EvReset,
		bus.EvTaskCreated, bus.EvTaskUnblocked, bus.EvTaskDone, bus.EvTaskKilled, bus.EvTaskRestarted, bus.EvChildDone, bus.EvCommit,
		bus.EvPhaseOpened, bus.EvPhaseExtended, bus.EvPhaseClosed,
		bus.EvAgentCreated, bus.EvAgentStarted, bus.EvAgentExited, bus.EvAgentKilled, bus.EvAgentRespawned, bus.EvAgentFailed, bus.EvAgentBudget,
		bus.EvRequestAsked, bus.EvRequestAnswered, bus.EvRequestMoot:
		return true
	}
	return false
}

// ChangesView reports whether an event of kind k may change what a view of
// the system shows (pm top's panels, the dashboard's task detail): a task's
// state (ChangesState), a room's messages, or an agent's usage (one
// agent.turn per model response). Streamed text, activity and tool events
// do not: views show those from the event itself, so they re-read nothing.
func ChangesView(k bus.Kind) bool {
	return ChangesState(k) || k == bus.EvMessage || k == bus.EvAgentTurn
}

func parseTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errs.Usagef(`a duration such as "90s" or "30m"`, "bad timeout %q", s)
	}
	return d, nil
}
