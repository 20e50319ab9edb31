package request

import (
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Moot = store.RequestMoot: nobody waits for the answer any more.
const Moot = store.RequestMoot

// MootWhy says why a pending request no longer needs an answer, or "" when
// it still does. It is derived from the records, so every reader agrees
// even before Settle has written it (a pm kill killed before it could):
//   - its task is done or killed: nobody works on it;
//   - the agent it is about, or that asked, was killed;
//   - that agent was the task's owner and is no longer (pm kill --restart
//     gave the task a fresh one).
//
// A failed agent's request is not moot: it is the human's way to resume it.
func MootWhy(s *store.Store, st state.State, r *Request) string {
	if r.Status != Pending {
		return ""
	}
	var t *store.Task
	if r.TaskID != "" {
		if got, err := st.Task(r.TaskID); err == nil {
			t = got
		}
	}
	if t != nil && t.Merge != nil && t.Merge.Request == r.ID && t.Status != store.TaskKilled {
		return "" // the question of its merge: done, held until it is answered (pm merge, pm reject)
	}
	if t != nil && (t.Status == store.TaskDone || t.Status == store.TaskKilled) {
		return "task " + t.ID + " is " + string(t.Status)
	}
	name := r.Agent
	if name == "" {
		name = r.From
	}
	a, err := st.Agent(name)
	if err != nil || a.TaskID == "" {
		return "" // the human, pm itself, or a record gone: nothing to derive
	}
	switch {
	case a.Status == store.AgentKilled:
		return "@" + a.Name + " was killed"
	case t != nil && a.IsOwner() && t.Owner != a.Name:
		return "@" + a.Name + " is no longer the owner of " + t.ID + " (restarted with @" + t.Owner + ")"
	}
	return ""
}

// Waiting reads the requests that still wait for an answer: pending and not
// moot (MootWhy). A failure to read them shows none rather than failing a
// view.
func Waiting(s *store.Store, st state.State) []*Request {
	all, err := st.Requests()
	if err != nil {
		return nil
	}
	var out []*Request
	for _, r := range all {
		if r.Status == Pending && MootWhy(s, st, r) == "" {
			out = append(out, r)
		}
	}
	return out
}

// Settle marks moot, with why, every pending request that MootWhy finds
// moot, and announces each (request.moot), so pm requests --all and the
// bus say what happened to it. pm kill, pm kill --restart and pm done run
// it after they change the records; a reader that finds one left (a kill
// cut short) may run it too. It returns the requests it marked.
func Settle(s *store.Store, st state.State, actor store.Actor) ([]*Request, error) {
	all, err := st.Requests()
	if err != nil {
		return nil, err
	}
	var marked []*Request
	for _, r := range all {
		why := MootWhy(s, st, r)
		if why == "" {
			continue
		}
		changed := false
		got, err := st.UpdateRequest(r.ID, func(r *Request) error {
			if r.Status != Pending {
				return store.ErrUnchanged
			}
			r.Status, r.Why, changed = Moot, why, true
			return nil
		})
		if err != nil {
			return marked, err
		}
		if !changed {
			continue // answered meanwhile: nothing to mark
		}
		marked = append(marked, got)
		s.Notify(bus.Event{Kind: bus.EvRequestMoot, Actor: actor.Name, TaskID: got.TaskID, Agent: got.From, Text: why,
			Data: bus.RequestMoot{Request: got.ID}})
	}
	return marked, nil
}
