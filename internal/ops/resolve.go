package ops

import (
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// ResolveTask picks the task an operation acts on: the named one, else the
// agent's own task, else (for the human) the only active task.
func ResolveTask(s *store.Store, st state.State, actor store.Actor, id string) (*store.Task, error) {
	if id != "" {
		full, err := state.CompleteID(st, ids.Task, id) // a unique prefix names its task
		if err != nil {
			return nil, err
		}
		return st.Task(full)
	}
	if actor.Agent != nil && actor.Agent.TaskID != "" {
		return st.Task(actor.Agent.TaskID)
	}
	tasks, err := st.LiveTasks()
	if err != nil {
		return nil, err
	}
	var active []string
	var only *store.Task
	for _, t := range tasks {
		if t.Status == store.TaskActive {
			active = append(active, t.ID)
			only = t
		}
	}
	switch len(active) {
	case 1:
		return only, nil
	case 0:
		return nil, errs.Statef(`start one with pm task "..."`, "no active task")
	}
	return nil, errs.Usagef("name one with --task: "+strings.Join(active, ", "), "%d tasks are active", len(active))
}

// OwnTask is the task an owner operation acts on (see ResolveTask), refused
// unless actor owns it.
func OwnTask(s *store.Store, st state.State, actor store.Actor, id string) (*store.Task, error) {
	t, err := ResolveTask(s, st, actor, id)
	if err != nil {
		return nil, err
	}
	return t, CheckOwner(actor, t)
}

// CheckOwner checks that actor may run owner operations on t: its owner or
// the human.
func CheckOwner(actor store.Actor, t *store.Task) error {
	if actor.IsHuman() || actor.Name == t.Owner {
		return nil
	}
	return errs.Statef("owner commands belong to @"+t.Owner+"; post your view with pm say", "@%s is not the owner of %s", actor.Name, t.ID)
}
