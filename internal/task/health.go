package task

import (
	"slices"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// State is what a task is doing and whether anyone is doing it: the one
// answer pm status gives per task.
type State string

// Task states, from the most to the least urgent for a person.
const (
	StateStalled      State = "stalled"       // its owner failed, exited or is gone: nobody works on it
	StateWaitingHuman State = "waiting-human" // an agent of it asked the human (pm answer)
	StateBlocked      State = "blocked"       // waits on other tasks
	StateWaitingKids  State = "waiting-children"
	StateStuck        State = "stuck" // idle three times runtime.idle_after: nothing moves
	StateIdle         State = "idle"  // live, but nothing posted, read or said for runtime.idle_after
	StateWorking      State = "working"
	StateStarting     State = "starting"    // owner recorded, not yet running
	StateManual       State = "manual"      // runtime none: a person or script acts as the owner
	StateConflict     State = "conflict"    // its merge conflicts: resolve, pm merge --ours|--theirs, or pm reject
	StateMergeWaits   State = "merge-waits" // its merge would touch the user's uncommitted changes
	StateReview       State = "review"      // done, its merge held for review: pm merge or pm reject
	StateDone         State = "done"
	StateKilled       State = "killed"
)

// Health is one task's state with what explains it and what to do next.
type Health struct {
	State State `json:"state"`
	// Phase is the active phase, with its message count and limit.
	Phase *PhaseCount `json:"phase,omitempty"`
	// Requests are the pending questions of the task's agents (rq-...).
	Requests []string `json:"requests,omitempty"`
	// Waiting are the tasks it waits on: live blockers or live subtasks.
	Waiting []string `json:"waiting,omitempty"`
	// Reason and ExitCode explain a stalled task (from its owner's record).
	Reason   string `json:"reason,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// Next is the command a person would run next, if any.
	Next string `json:"next,omitempty"`
	// LastActivity is when a live task last moved (liveness.go: its room,
	// owner and role agents), IdleSeconds how long ago that was.
	LastActivity *time.Time `json:"last_activity,omitempty"`
	IdleSeconds  int64      `json:"idle_seconds,omitempty"`
	// Repair: the records hold a state only a crash leaves (a task recorded
	// blocked whose blockers are all done, an owner or role agent of a live
	// task or open room never started, a role with no agent): whoever sees
	// it and can start agents runs Settle (ops does, for pm status, pm wait
	// and the views), which finishes the step the crash cut off.
	Repair bool `json:"-"`
}

// PhaseCount is a phase's id, name and how full its room is.
type PhaseCount struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Messages int    `json:"messages"`
	Limit    int    `json:"limit"`
}

// HealthOf works out the state of t from its owner, phases, requests,
// blockers and children. pending are the store's pending requests (read
// once by the caller for all tasks).
func HealthOf(s *store.Store, st state.State, t *store.Task, pending []*store.Request) Health {
	if t.Held() {
		return mergeHealth(s, t)
	}
	switch t.Status {
	case store.TaskDone:
		return Health{State: StateDone}
	case store.TaskKilled:
		return Health{State: StateKilled}
	case store.TaskBlocked:
		if h := blockedHealth(s, st, t); h.State != StateBlocked || len(h.Waiting) > 0 {
			return h
		}
		// Blocked only by done tasks: not blocked (a pm done killed between
		// its mark and the unblocking). It is what it would be unblocked.
		h := activeHealth(s, st, t, pending)
		h.Repair = true
		return h
	}
	return activeHealth(s, st, t, pending)
}

// activeHealth is HealthOf for a task that is (or, by its blockers, should
// be) active.
func activeHealth(s *store.Store, st state.State, t *store.Task, pending []*store.Request) (h Health) {
	h = Health{State: StateWorking}
	for _, r := range pending {
		if r.TaskID == t.ID {
			h.Requests = append(h.Requests, r.ID)
		}
	}
	p, err := state.ActivePhase(st, t.ID)
	if err != nil {
		p = nil
	}
	defer idleHealth(s, st, t, p, &h) // last activity for every state; idle/stuck only for working
	if p != nil {
		n, _ := st.MessageCount(t.ID, p.ID)
		h.Phase = &PhaseCount{ID: p.ID, Name: p.Name, Messages: n, Limit: p.MessageLimit}
		if agent.RolesPending(s, st, p) {
			h.Repair = true
		}
	}
	if owner, err := st.Agent(t.Owner); err == nil {
		if stalled(owner) {
			h.State, h.Reason, h.ExitCode = StateStalled, ownerReason(owner), owner.ExitCode
			h.Next = "pm logs " + owner.Name + "; then pm kill " + t.ID + " --restart"
			return h
		}
		switch {
		case owner.Status == store.AgentPending && t.Runtime == config.RuntimeNone:
			h.State = StateManual
		case owner.Status == store.AgentPending:
			h.State, h.Repair = StateStarting, true
		}
	}
	if len(h.Requests) > 0 {
		h.State, h.Next = StateWaitingHuman, "pm answer "+h.Requests[0]+" \"...\""
		return h
	}
	if kids := liveOf(st, t.Children); len(kids) > 0 && h.Phase == nil && h.State == StateWorking {
		h.State, h.Waiting = StateWaitingKids, kids
	}
	return h
}

// blockedHealth: a blocked task waits on its live blockers; once one of
// them is killed it will never start (only done blockers unblock), and it is
// stalled: somebody must run the blocker again or kill the task.
func blockedHealth(s *store.Store, st state.State, t *store.Task) Health {
	waiting, killed := Blocking(st, t)
	if killed != "" {
		return Health{
			State:  StateStalled,
			Reason: "waits for " + killed + ", which was killed: it will never start",
			Next:   "pm kill " + killed + " --restart to run it again, or pm kill " + t.ID,
		}
	}
	return Health{State: StateBlocked, Waiting: waiting}
}

// Blocking is the one definition of what holds a task back: its blockers
// that are not done (live, or unreadable: shown rather than hidden, as liveOf
// does), and the first that was killed, if any. A task recorded blocked with
// none is not blocked: HealthOf shows it as what it would be unblocked, and
// Settle unblocks it.
func Blocking(st state.State, t *store.Task) (waiting []string, killed string) {
	for _, id := range t.BlockedBy {
		b, err := st.Task(id)
		switch {
		case err == nil && b.Status == store.TaskDone && b.Held():
			waiting = append(waiting, id) // done, its work not merged yet
		case err == nil && b.Status == store.TaskKilled:
			if killed == "" {
				killed = id
			}
			waiting = append(waiting, id)
		case err != nil || b.Live():
			waiting = append(waiting, id)
		}
	}
	return slices.Clip(waiting), killed
}

// stalled: the owner of a live task is not running and will not be
// restarted on its own (failed, exited, killed, or its process is gone).
func stalled(a *store.Agent) bool {
	switch a.Status {
	case store.AgentFailed, store.AgentExited, store.AgentKilled:
		return true
	case store.AgentRunning:
		return !agent.Running(a)
	}
	return false
}

func ownerReason(a *store.Agent) string {
	if a.Status == store.AgentRunning {
		return "owner @" + a.Name + " is recorded running but its process is gone"
	}
	r := "owner @" + a.Name + " " + string(a.Status)
	if a.Reason != "" {
		r += ": " + a.Reason
	}
	return r
}

// liveOf keeps the ids whose task is still live (or unreadable: shown rather
// than hidden).
func liveOf(st state.State, ids []string) []string {
	var out []string
	for _, id := range ids {
		if t, err := st.Task(id); err != nil || t.Live() {
			out = append(out, id)
		}
	}
	return slices.Clip(out)
}

// PendingRequests reads the store's requests that wait for an answer
// (request.Waiting: pending and not moot); a failure to read them shows no
// requests rather than failing the whole status.
func PendingRequests(s *store.Store, st state.State) []*store.Request { return request.Waiting(s, st) }

// mergeHealth is the health of a task whose merge waits (store.TaskMerge).
func mergeHealth(s *store.Store, t *store.Task) Health {
	h := Health{State: StateReview, Reason: waitsWhy(t, t.Merge), Next: waitsTry(t, t.Merge, worktreeHere(s, t))}
	switch t.Merge.State {
	case store.MergeConflict:
		h.State = StateConflict
	case store.MergeDirty:
		h.State = StateMergeWaits
	}
	if t.Merge.Request != "" {
		h.Requests = []string{t.Merge.Request}
	}
	return h
}
