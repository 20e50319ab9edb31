package agent

import (
	"strings"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// OpenPhase is pm phase (ops.OpenPhase): it checks that every role names a
// prompt object, records the phase and its role agents (phase.CreateThen:
// both under the task's phases lock) and starts them with l. The owner
// check is the caller's. Agent names come back parallel to sp.Roles. It is
// here, not in package phase, because it starts agents: phase stays light
// enough for the short commands' executable.
//
// A pm phase killed part-way leaves an open room whose roles are missing
// or never started; its retry (the same name, limit, roles and rules) finds
// that room, finishes it (EnsureRoles) and succeeds.
func OpenPhase(s *store.Store, l *Launcher, actor store.Actor, sp phase.Spec) (*store.Phase, []string, error) {
	st := l.State
	roles := make([]string, 0, len(sp.Roles))
	for _, r := range sp.Roles {
		if r = strings.TrimSpace(r); r != "" {
			roles = append(roles, r)
		}
	}
	sp.Roles = roles
	set, err := prompt.LoadProject(s, st)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range roles {
		if _, ok := set[r]; !ok {
			return nil, nil, errs.NotFoundf("roles are prompt objects: "+strings.Join(set.Names(), ", "), "no prompt object for role %q", r)
		}
	}
	t, err := st.Task(sp.TaskID)
	if err != nil {
		return nil, nil, err
	}
	ph, err := phase.CreateThen(s, st, actor, sp, func(ph *store.Phase) error {
		_, err := recordRoles(s, st, t, ph)
		return err
	})
	if errs.Is(err, errs.State) && ph == nil {
		// A retry of a pm phase killed part-way: the same room, open.
		if act, aerr := state.ActivePhase(st, t.ID); aerr == nil && act != nil && phase.SameSpec(act, sp) {
			ph, err = act, nil
		}
	}
	if err != nil {
		return ph, nil, err
	}
	names, err := EnsureRoles(s, l, t.ID)
	if ph.Agents = names; err != nil {
		return ph, names, err
	}
	return ph, names, nil
}

// EnsureRoles finishes the open room of taskID, if it has one: a role with
// no agent gets one, and a role agent never started is started. pm phase
// does this for the room it opens; every command that sees a room left so
// (a pm phase killed part-way: task.Settle, pm status, pm wait) does it
// again. Roles are recorded under the task's phases lock, the lock pm phase
// holds from the phase's record to its roles', so nobody creates a role a
// live pm phase is creating; starting is Launcher.Start, which never runs
// two hosts for one agent. It returns the room's role agents, in the order
// of its roles.
func EnsureRoles(s *store.Store, l *Launcher, taskID string) ([]string, error) {
	st := l.State
	var ph *store.Phase
	var names []string
	err := st.WithPhases(taskID, func() error {
		t, err := st.Task(taskID)
		if err != nil || t.Status != store.TaskActive {
			return err
		}
		if ph, err = state.ActivePhase(st, taskID); err != nil || ph == nil {
			return err
		}
		names, err = recordRoles(s, st, t, ph)
		return err
	})
	if err != nil || ph == nil {
		return names, err
	}
	for _, n := range names {
		if err := l.Start(n); err != nil && !errs.Is(err, errs.State) {
			return names, err
		}
	}
	return names, nil
}

// RolesPending reports whether the open room ph has a role with no agent
// recorded, or one recorded but never started: what only a pm phase killed
// part-way (or still running) leaves. Reads only the records ph names.
func RolesPending(s *store.Store, st state.State, ph *store.Phase) bool {
	if len(ph.Agents) < len(ph.Roles) {
		return true
	}
	for _, n := range ph.Agents {
		if a, err := st.Agent(n); err == nil && a.Status == store.AgentPending && a.Runtime != config.RuntimeNone {
			return true
		}
	}
	return false
}

// recordRoles makes sure each role of ph has an agent record (one found
// from an earlier, killed attempt is kept) and that phase.json names them;
// the caller holds the task's phases lock.
func recordRoles(s *store.Store, st state.State, t *store.Task, ph *store.Phase) ([]string, error) {
	if len(ph.Agents) == len(ph.Roles) && len(ph.Roles) > 0 {
		return ph.Agents, nil
	}
	have := map[string]string{} // role -> agent, from an earlier attempt
	if len(ph.Roles) > 0 {
		agents, err := state.AgentsOf(st, t.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			if a.PhaseID == ph.ID && a.Role != "" && have[a.Role] == "" {
				have[a.Role] = a.Name
			}
		}
	}
	worker := "" // a room's roles run where its task's owner is placed
	if o, err := st.Agent(t.Owner); err == nil {
		worker = o.Worker
	}
	names := make([]string, 0, len(ph.Roles))
	for _, r := range ph.Roles {
		if n := have[r]; n != "" {
			names = append(names, n)
			continue
		}
		a, err := New(s, st, store.Agent{Prompt: r, Role: r, TaskID: t.ID, PhaseID: ph.ID, Runtime: t.Runtime, Model: t.Model, Worker: worker})
		if err != nil {
			return names, err
		}
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		return names, nil
	}
	if err := phase.SetAgents(s, st, t.ID, ph.ID, names); err != nil {
		return names, err
	}
	ph.Agents = names
	return names, nil
}

// Unstarted reports whether a is the owner of t, an active task, recorded
// and never started: what only a pm task (or kill --restart) killed between
// the task's record and the owner's start, or still on its way there,
// leaves. Settle starts it; the supervisor and pm doctor --check count it as
// live work (one definition for both).
func Unstarted(a *store.Agent, t *store.Task) bool {
	return a.Status == store.AgentPending && a.Role == "" && a.Runtime != config.RuntimeNone &&
		t != nil && a.TaskID == t.ID && t.Status == store.TaskActive && t.Owner == a.Name
}

// Wanted is whether agent a should be running, the one definition the
// supervisor (stay on, respawn) and pm doctor --check (stranded or not)
// share: never an agent on runtime none, one killed, failed or never
// started, nor one that left by itself (exited 0: an owner that ends its
// turn without pm done is stalled and waits for a person, not for a
// respawn); otherwise a resident prompt object (no task) is wanted, a
// task's owner while its task t is active and it is still the owner, and
// a role agent while its phase (read by phase, only then) is active. An
// owner that ended while its task's merge waits for a decision is not.
func Wanted(a *store.Agent, t *store.Task, phase func() (*store.Phase, error)) bool {
	if a.Runtime == config.RuntimeNone {
		return false
	}
	switch a.Status {
	case store.AgentKilled, store.AgentFailed, store.AgentPending:
		return false
	case store.AgentExited:
		if a.ExitCode == nil || *a.ExitCode == 0 {
			return false
		}
	}
	if a.TaskID == "" {
		return true
	}
	if t == nil || t.ID != a.TaskID || t.Status != store.TaskActive {
		return false
	}
	if a.Role == "" {
		// An owner that ended while its task's merge waits for a decision
		// (pm done exits 5 then: local changes, review, a conflict for the
		// human or the parent's owner) has done its part; a respawn would
		// only run pm done again, racing the decider. pm reject starts it
		// when the work is sent back.
		if a.Status == store.AgentExited && t.Merge != nil {
			return false
		}
		return t.Owner == a.Name
	}
	ph, err := phase()
	return err == nil && ph.Status == store.PhaseActive
}

// RejectionUnseen: a is the owner of task t, which is active and was
// rejected (pm reject) since a last started, and a ended by itself (exit
// 0, or no status recorded: a crash is the supervisor's respawn). Whoever
// keeps a's host (the supervisor where it is placed) starts it again, so a
// rejection is never lost: one that came while the owner was finishing
// (its pm done returned, its host still running) could not start it then.
func RejectionUnseen(a *store.Agent, t *store.Task) bool {
	if a.Role != "" || a.Runtime == config.RuntimeNone || a.Status != store.AgentExited || (a.ExitCode != nil && *a.ExitCode != 0) {
		return false
	}
	return t != nil && t.ID == a.TaskID && t.Status == store.TaskActive && t.Owner == a.Name && t.Rejections > a.Rejections
}
