package ops

import (
	"slices"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// maxAncestry bounds the walk up a task's parents: the subtask depth breaker
// keeps real chains short, and a hand-edited cycle must not loop forever.
const maxAncestry = 64

// CheckAnswer checks that actor may answer r: the human may; an agent only
// when config.json names it (by agent or prompt name) in
// requests.answerers; the agent that asked never may, so no agent can
// answer its own ask_human.
func CheckAnswer(cfg config.Config, actor store.Actor, r *request.Request) error {
	if actor.Name == r.From {
		return errs.Statef("wait for the human to answer it (they run pm answer "+r.ID+")",
			"@%s asked %s and may not answer it", actor.Name, r.ID)
	}
	a := actor.Agent
	if a == nil {
		return nil
	}
	if slices.Contains(cfg.Requests.Answerers, a.Name) || a.Prompt != "" && slices.Contains(cfg.Requests.Answerers, a.Prompt) {
		return nil
	}
	return errs.Statef("only the human answers requests, unless requests.answerers in config.json names you",
		"@%s may not answer %s", actor.Name, r.ID)
}

// CheckKill checks that actor may kill (or restart) task target: the human
// any task; an agent only a subtask (at any depth) of the task it owns, never
// its own task, its parent or another tree.
func CheckKill(s *store.Store, st state.State, actor store.Actor, target *store.Task) error {
	a := actor.Agent
	if a == nil {
		return nil
	}
	try := "an agent kills only subtasks of the task it owns; ask the human for anything else"
	if !a.IsOwner() || a.TaskID == "" || target.ID == a.TaskID {
		return errs.Statef(try, "@%s may not kill %s", actor.Name, target.ID)
	}
	own, err := st.Task(a.TaskID)
	if err != nil {
		return err
	}
	if err := CheckOwner(actor, own); err != nil {
		return err
	}
	if !descendsFrom(s, st, target, own.ID) {
		return errs.Statef(try, "@%s may not kill %s: it is not a subtask of %s", actor.Name, target.ID, own.ID)
	}
	return nil
}

// descendsFrom reports whether t is a subtask, at any depth, of ancestor.
func descendsFrom(s *store.Store, st state.State, t *store.Task, ancestor string) bool {
	for range maxAncestry {
		if t.ParentID == "" {
			return false
		}
		if t.ParentID == ancestor {
			return true
		}
		p, err := st.Task(t.ParentID)
		if err != nil {
			return false
		}
		t = p
	}
	return false
}

// CheckReset refuses pm reset to every agent: wiping the state directory is
// the human's call.
func CheckReset(actor store.Actor) error {
	if actor.IsHuman() {
		return nil
	}
	return errs.Statef("ask the human to run pm reset", "@%s may not reset the state directory", actor.Name)
}

// CheckDesign refuses the code designer's own entry (pm design, MCP's
// design) to every agent: it calls models with the human's key and writes
// files from the unconfined side. An agent that owns a task reviews its
// work with design_review, which checks that it owns the task.
func CheckDesign(actor store.Actor) error {
	if actor.IsHuman() {
		return nil
	}
	return errs.Statef("a task's owner uses design_review; ask the human to run pm design", "@%s may not run the code designer", actor.Name)
}
