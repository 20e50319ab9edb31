package supervisor

import (
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// The other half of the reconcile: a host that runs while its agent is not
// wanted any more is stopped through the driver. A killed agent or task
// (pm kill racing a respawn) is stopped at once; an agent whose task is done
// or whose phase closed first gets the time its host takes to leave by
// itself (the role grace, then the stop grace twice: the host's own
// SIGTERM-then-SIGKILL of its runtime, and a margin).

// stopDeadline says when the live, unwanted host of a is to be stopped, and
// why; ok is false when it is left alone (it is leaving on its own).
func (sv *Supervisor) stopDeadline(a *store.Agent) (at time.Time, why string, ok bool) {
	now := sv.Store.Now()
	switch {
	case a.Runtime == config.RuntimeNone || a.Status == store.AgentExited || a.Status == store.AgentPending:
		return time.Time{}, "", false
	case a.Status == store.AgentKilled || a.Status == store.AgentFailed:
		// pm kill stops it itself within the stop grace; this is the backstop.
		return sv.afterStop(a.EndedAt, now), "agent is " + string(a.Status), true
	case a.TaskID == "":
		return time.Time{}, "", false // a resident prompt object: wanted while it runs
	}
	t, err := sv.records().Task(a.TaskID)
	switch {
	case err != nil || t.Status == store.TaskKilled:
		return now, "task " + a.TaskID + " is killed", true
	case t.Status != store.TaskActive:
		return sv.afterLeaving(t.EndedAt, now), "task " + a.TaskID + " is " + string(t.Status), true
	case a.Role == "":
		return now, "no longer the owner of " + a.TaskID, true
	}
	ph, err := sv.records().Phase(a.TaskID, a.PhaseID)
	if err != nil {
		return now, "phase " + a.PhaseID + " is gone", true
	}
	return sv.afterLeaving(ph.ClosedAt, now), "phase " + a.PhaseID + " is " + string(ph.Status), true
}

// afterLeaving is when a host told at `since` to leave should be gone.
func (sv *Supervisor) afterLeaving(since *time.Time, now time.Time) time.Time {
	if since == nil {
		return now
	}
	rt := sv.Store.Config().Runtime
	return since.Add(time.Duration(rt.RoleGraceSeconds)*time.Second + 2*rt.StopGrace())
}

// afterStop is when a host being stopped since `since` should be gone.
func (sv *Supervisor) afterStop(since *time.Time, now time.Time) time.Time {
	if since == nil {
		return now
	}
	return since.Add(2 * sv.Store.Config().Runtime.StopGrace())
}

// stopUnwanted stops a's live host when its deadline has come, or wakes the
// loop then.
func (sv *Supervisor) stopUnwanted(a *store.Agent) {
	at, why, ok := sv.stopDeadline(a)
	if !ok {
		return
	}
	sv.mu.Lock()
	if wait := at.Sub(sv.Store.Now()); wait > 0 {
		if sv.stopAt[a.Name] != at {
			sv.stopAt[a.Name] = at
			time.AfterFunc(wait, sv.poke)
		}
		sv.mu.Unlock()
		return
	}
	delete(sv.stopAt, a.Name)
	sv.mu.Unlock()
	sv.stopHost(a.Name, a.Handle, why)
}

// stopHost is the one way the supervisor stops a host it runs, whatever
// the reason (its agent unwanted, removed or placed on another worker):
// once per run, in the background, the run noted in sv.stopping until it
// is gone, so a reconcile meanwhile neither stops it again nor counts it
// crashed, and the supervisor stays while it is stopped.
func (sv *Supervisor) stopHost(name string, h driver.Handle, why string) {
	sv.mu.Lock()
	if sv.stopping[name] == h {
		sv.mu.Unlock()
		return
	}
	sv.stopping[name] = h
	sv.mu.Unlock()
	go func() {
		sv.stop(name, h, why)
		sv.mu.Lock()
		if sv.stopping[name] == h {
			delete(sv.stopping, name)
		}
		sv.mu.Unlock()
		sv.poke()
	}()
}

// stop records the run killed (if it is still the recorded, running one,
// placed here) and ends it and what it started through the driver. A
// record that is gone (pm reset) or now another worker's is not written.
func (sv *Supervisor) stop(name string, h driver.Handle, why string) {
	s := sv.Store
	now := s.Now().UTC()
	marked := false
	a, err := sv.records().UpdateAgent(name, func(r *store.Agent) error {
		if r.Handle != h || r.Status != store.AgentRunning || !sv.here(r) {
			return store.ErrUnchanged
		}
		marked = true
		r.Status, r.EndedAt, r.Reason = store.AgentKilled, &now, "stopped by the supervisor: "+why
		return nil
	})
	switch {
	case errs.CodeOf(err) == errs.NotFound:
		a = &store.Agent{Name: name} // removed: nothing to record, the host still to stop
	case err != nil:
		sv.Log.Error("stop", "agent", name, "err", err)
		return
	}
	sv.Log.Info("stopping unwanted agent", "agent", name, "pid", h.Pid, "why", why)
	if _, err := sv.drv.Stop(sv.ctx, h); err != nil {
		sv.Log.Error("stop", "agent", name, "err", err)
		return
	}
	if !marked {
		return // already recorded as ended (pm kill): its event is out
	}
	s.Notify(bus.Event{Kind: bus.EvAgentKilled, Actor: "supervisor", Agent: name, TaskID: a.TaskID, PhaseID: a.PhaseID, Text: why,
		Data: bus.AgentKilled{Pid: h.Pid}})
}
