package task

import (
	"os"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/store"
)

// MaxDescription bounds a task description (bytes).
const MaxDescription = 4 << 10

// Spec is what pm task and pm subtask ask for.
type Spec struct {
	Description string
	BlockedBy   []string
	Runtime     string // llm, exec or none; "" means the config default
	Model       string
	ParentID    string // set by pm subtask
	Context     []byte // context.md for a subtask (optional)
}

// Create records a task and its owner agent and, unless the task is blocked,
// starts the owner. Breakers (active tasks, subtask depth) are checked and the
// task recorded under the tasks lock, so racing creators cannot overshoot.
func Create(s *store.Store, l *agent.Launcher, actor store.Actor, sp Spec) (*store.Task, error) {
	if err := validate(s, &sp); err != nil {
		return nil, err
	}
	var t *store.Task
	err := lockedfile.With(s.TasksDir(), func() error {
		var err error
		t, err = createHeld(s, sp)
		return err
	})
	if err != nil {
		return nil, err
	}
	_ = s.Emit(store.Event{Kind: store.EvTaskCreated, Actor: actor.Name, TaskID: t.ID, Agent: t.Owner, Text: t.Description,
		Data: map[string]any{"status": t.Status, "parent_id": t.ParentID, "blocked_by": t.BlockedBy, "runtime": t.Runtime, "depth": t.Depth}})
	if t.Status == store.TaskActive {
		if err := l.Start(t.Owner); err != nil {
			return t, err
		}
	}
	return t, nil
}

func validate(s *store.Store, sp *Spec) error {
	sp.Description = strings.TrimSpace(sp.Description)
	if sp.Description == "" {
		return errs.Usagef(`pm task "Build a landing page"`, "a task needs a description")
	}
	if len(sp.Description) > MaxDescription {
		return errs.Usagef("put details in a context file (pm subtask --context-file)", "description of %d bytes is over %d", len(sp.Description), MaxDescription)
	}
	if sp.Runtime == "" {
		sp.Runtime = s.Config.Runtime.Default
	}
	switch sp.Runtime {
	case "exec", "none", "llm":
	default:
		return errs.Usagef("--runtime llm, exec or none", "unknown runtime %q", sp.Runtime)
	}
	if sp.Runtime == "exec" && len(s.Config.Runtime.Exec.Command) == 0 {
		return errs.Failf(`set runtime.exec.command in `+s.ConfigPath()+`, e.g. ["claude","-p","--dangerously-skip-permissions"]`, "no agent command configured for the exec runtime")
	}
	seen := map[string]bool{}
	var blockers []string
	for _, b := range sp.BlockedBy {
		for _, id := range strings.Split(b, ",") {
			id = strings.TrimSpace(id)
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			if _, err := s.Task(id); err != nil {
				return err
			}
			blockers = append(blockers, id)
		}
	}
	sp.BlockedBy = blockers
	return nil
}

// checkActiveLimit refuses one more live task past limits.active_tasks. The
// caller holds the tasks lock.
func checkActiveLimit(s *store.Store) error {
	live, err := s.LiveTasks()
	if err != nil {
		return err
	}
	if max := s.Config.Limits.ActiveTasks; len(live) >= max {
		return errs.Limitf("finish or kill a task first (pm status), or raise limits.active_tasks in "+s.ConfigPath(),
			"%d tasks are active or blocked; the limit is %d", len(live), max)
	}
	return nil
}

func createHeld(s *store.Store, sp Spec) (*store.Task, error) {
	lim := s.Config.Limits
	if err := checkActiveLimit(s); err != nil {
		return nil, err
	}
	depth := 0
	if sp.ParentID != "" {
		parent, err := s.Task(sp.ParentID)
		if err != nil {
			return nil, err
		}
		if parent.Status != store.TaskActive {
			return nil, errs.Statef("subtasks are created by the owner of an active task", "parent task %s is %s", parent.ID, parent.Status)
		}
		// Range-checked before the +1: a hand-edited depth cannot wrap.
		if parent.Depth < 0 {
			return nil, errs.Failf("fix depth in "+s.TaskPath(parent.ID), "parent task %s records depth %d", parent.ID, parent.Depth)
		}
		if parent.Depth >= lim.SubtaskDepth {
			return nil, errs.Limitf("do the work in this task, or raise limits.subtask_depth in "+s.ConfigPath(),
				"a subtask of %s would be at depth %d; the limit is %d", parent.ID, uint(parent.Depth)+1, lim.SubtaskDepth)
		}
		depth = parent.Depth + 1
	}
	status := store.TaskActive
	var pending []string
	for _, b := range sp.BlockedBy {
		bt, err := s.Task(b)
		if err != nil {
			return nil, err
		}
		if bt.Status != store.TaskDone {
			pending = append(pending, b)
		}
	}
	if len(pending) > 0 {
		status = store.TaskBlocked
	}
	id := ""
	for range 16 {
		if c := s.IDs.New(ids.Task); !s.TaskDirExists(c) {
			id = c
			break
		}
	}
	if id == "" {
		return nil, errs.Failf("", "could not find a free task id")
	}
	t := &store.Task{
		ID: id, Description: sp.Description, ParentID: sp.ParentID, BlockedBy: pending,
		Status: status, Depth: depth, Runtime: sp.Runtime, Model: sp.Model, CreatedAt: s.Now().UTC(),
	}
	if t.BlockedBy == nil {
		t.BlockedBy = []string{}
	}
	owner, err := agent.New(s, store.Agent{Prompt: "owner", TaskID: id, Runtime: sp.Runtime, Model: sp.Model})
	if err != nil {
		return nil, err
	}
	t.Owner = owner.Name
	if err := s.WriteTask(t); err != nil {
		return nil, err
	}
	if len(sp.Context) > 0 {
		if err := os.WriteFile(s.ContextPath(id), sp.Context, 0o644); err != nil {
			return nil, err
		}
	}
	return t, link(s, t)
}

// link records the reverse edges: the parent's children and each blocker's
// dependants, so done and wait-children never scan every task. It runs under
// the tasks lock, like pm done's checks and mark, so a child or dependant is
// either linked before its parent or blocker finishes or sees it finished.
func link(s *store.Store, t *store.Task) error {
	if t.ParentID != "" {
		if _, err := s.UpdateTask(t.ParentID, func(p *store.Task) error {
			p.Children = append(p.Children, t.ID)
			return nil
		}); err != nil {
			return err
		}
	}
	for _, b := range t.BlockedBy {
		if _, err := s.UpdateTask(b, func(bt *store.Task) error {
			bt.Blocks = append(bt.Blocks, t.ID)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// MaxContext bounds the context a parent hands a subtask (bytes).
const MaxContext = 256 << 10

// Subtask is pm subtask: a child of parent with its own owner, on runtime
// (default: the parent's) and the parent's model. The owner check is the
// caller's.
func Subtask(s *store.Store, l *agent.Launcher, actor store.Actor, parent *store.Task, description string, context []byte, runtime string) (*store.Task, error) {
	if len(context) > MaxContext {
		return nil, errs.Usagef("keep context under 256 KiB", "context of %d bytes is too long", len(context))
	}
	if runtime == "" {
		runtime = parent.Runtime
	}
	return Create(s, l, actor, Spec{Description: description, ParentID: parent.ID, Runtime: runtime, Model: parent.Model, Context: context})
}
