package task

import (
	"errors"
	"slices"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// MaxDescription bounds a task description (bytes).
const MaxDescription = 4 << 10

// Spec is what pm task and pm subtask ask for.
type Spec struct {
	Description string
	BlockedBy   []string
	Runtime     config.RuntimeName // llm, exec or none; "" means the config default
	Model       string
	ParentID    string // set by pm subtask
	Context     []byte // context.md for a subtask (optional)
	// CodeDesigner is the owner's code-designer mode as pm task decided it
	// (nil: its host decides when it starts; internal/designmode).
	CodeDesigner *designmode.Mode
	// Review holds a top-level task's merge until the human runs pm merge
	// or pm reject (pm task --review; merge.review "human" sets it too).
	Review bool
	// On is the worker the task's agents are placed on (pm task --on; see
	// Place). A subtask without one takes its parent owner's.
	On string

	repo     *gitx.Pin      // set by Create (repoPin)
	worktree *gitx.Worktree // set by Create (worktreePlan): all but the path
}

// Create records a task and its owner agent and, unless the task is blocked,
// starts the owner. Breakers (active tasks, subtask depth) are checked and the
// task recorded under the tasks lock, so racing creators cannot overshoot.
func Create(s *store.Store, l *agent.Launcher, actor store.Actor, sp Spec) (*store.Task, error) {
	st := l.State
	if err := validate(s, st, &sp); err != nil {
		return nil, err
	}
	repo, err := repoPin(s, st, actor, sp.ParentID)
	if err != nil {
		return nil, err
	}
	sp.repo = repo
	m := here(s) // one fetch of a remote for the plan and the worktree
	if sp.worktree, err = worktreePlan(m, st, repo, sp.ParentID, sp.Runtime); err != nil {
		return nil, err
	}
	var t *store.Task
	err = st.WithTasks(func() error {
		var err error
		t, err = createHeld(s, st, l, sp)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.Notify(bus.Event{Kind: bus.EvTaskCreated, Actor: actor.Name, TaskID: t.ID, Agent: t.Owner, Text: t.Description,
		Data: bus.TaskCreated{Status: string(t.Status), ParentID: t.ParentID, BlockedBy: t.BlockedBy, Runtime: string(t.Runtime), Depth: t.Depth}})
	// The worktree before the owner: its agents work there. Killed in
	// between, the next command's Settle makes it before it starts the owner.
	if err := makeWorktree(m, t); err != nil {
		return t, err
	}
	if t.Status == store.TaskActive {
		if err := l.Start(t.Owner); err != nil {
			return t, err
		}
	}
	settle(s, l, actor)
	// Killed or merged tasks' branches left on the remote go after the
	// owner started, not before: one push, at most maxDrops of them.
	repairRemoteBranches(m, st)
	return t, nil
}

func validate(s *store.Store, st state.State, sp *Spec) error {
	sp.Description = strings.TrimSpace(sp.Description)
	if sp.Description == "" {
		return errs.Usagef(`pm task "Build a landing page"`, "a task needs a description")
	}
	if len(sp.Description) > MaxDescription {
		return errs.Usagef("put details in a context file (pm subtask --context-file)", "description of %d bytes is over %d", len(sp.Description), MaxDescription)
	}
	if sp.Runtime == "" {
		sp.Runtime = s.Config().Runtime.Default
	}
	switch sp.Runtime {
	case config.RuntimeExec, config.RuntimeNone, config.RuntimeLLM:
	default:
		return errs.Usagef("--runtime llm, exec or none", "unknown runtime %q", sp.Runtime)
	}
	if sp.Runtime == config.RuntimeExec && len(s.Config().Runtime.Exec.Command) == 0 {
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
			full, err := state.CompleteID(st, ids.Task, id) // a unique prefix names its task
			if err != nil {
				return err
			}
			if _, err := st.Task(full); err != nil {
				return err
			}
			if !slices.Contains(blockers, full) {
				blockers = append(blockers, full)
			}
		}
	}
	sp.BlockedBy = blockers
	return nil
}

// repoPin is the repository the task's work will be committed to (pm
// done). A subtask's is its parent's, and a task an agent creates is its
// own task's: what an agent did to .git since the human created the tree
// cannot choose it. A task the human (or an agent without a task) creates
// pins what holds the project now, as this process sees it; a parent
// recorded before pins gets the same.
func repoPin(s *store.Store, st state.State, actor store.Actor, parentID string) (*gitx.Pin, error) {
	from := parentID
	if from == "" && actor.Agent != nil {
		from = actor.Agent.TaskID
	}
	if from != "" {
		t, err := st.Task(from)
		if err != nil {
			return nil, err
		}
		if t.Repo != nil {
			return t.Repo, nil
		}
	}
	p, err := gitx.Locate(s.ProjectDir())
	if err != nil {
		return nil, errs.Failf("fix the repository (git status), then create the task again", "pin the repository of %s: %v", s.ProjectDir(), err)
	}
	return &p, nil
}

// checkActiveLimit refuses one more live task past limits.active_tasks. The
// caller holds the tasks lock.
func checkActiveLimit(s *store.Store, st state.State) error {
	_, err := liveUnderLimit(s, st, 0)
	return err
}

// checkActiveLimitFreeing is checkActiveLimit for a change that also ends
// freed live tasks in the same critical section (pm kill --restart).
func checkActiveLimitFreeing(s *store.Store, st state.State, freed int) error {
	_, err := liveUnderLimit(s, st, freed)
	return err
}

// liveUnderLimit is checkActiveLimitFreeing returning the live tasks it
// read (a placement reads their agents: Place).
func liveUnderLimit(s *store.Store, st state.State, freed int) ([]*store.Task, error) {
	live, err := st.LiveTasks()
	if err != nil {
		return nil, err
	}
	if max := s.Config().Limits.ActiveTasks; len(live)-freed >= max {
		return nil, errs.Limitf("finish or kill a task first (pm status), or raise limits.active_tasks in "+s.ConfigPath(),
			"%d tasks are active or blocked; the limit is %d", len(live)-freed, max)
	}
	return live, nil
}

func createHeld(s *store.Store, st state.State, l *agent.Launcher, sp Spec) (*store.Task, error) {
	lim := s.Config().Limits
	live, err := liveUnderLimit(s, st, 0)
	if err != nil {
		return nil, err
	}
	depth := 0
	if sp.ParentID != "" {
		parent, err := st.Task(sp.ParentID)
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
		bt, err := st.Task(b)
		if err != nil {
			return nil, err
		}
		if bt.Status != store.TaskDone || bt.Held() {
			pending = append(pending, b)
		}
	}
	if len(pending) > 0 {
		status = store.TaskBlocked
	}
	worker, err := placement(st, sp, live)
	if err != nil {
		return nil, err
	}
	create := func(fn func() error) error { return fn() }
	if sp.Runtime != config.RuntimeNone {
		create = l.Wanted // the task is recorded while a supervisor is marked wanted
	}
	var t *store.Task
	err = create(func() (err error) {
		t, err = st.CreateTask(func(id string) (*store.Task, []byte, error) {
			t := &store.Task{
				ID: id, Description: sp.Description, ParentID: sp.ParentID, BlockedBy: pending,
				Status: status, Depth: depth, Runtime: sp.Runtime, Model: sp.Model, CreatedAt: s.Now().UTC(),
				Repo: sp.repo,
			}
			t.Worktree = worktreeFor(s, sp.worktree, id)
			t.Review = t.Worktree != nil && sp.ParentID == "" && (sp.Review || s.Config().Merge.Review == "human")
			if t.BlockedBy == nil {
				t.BlockedBy = []string{}
			}
			owner, err := agent.New(s, st, store.Agent{Prompt: "owner", TaskID: id, Runtime: sp.Runtime, Model: sp.Model, CodeDesigner: sp.CodeDesigner, Worker: worker})
			if err != nil {
				return nil, nil, err
			}
			t.Owner = owner.Name
			return t, sp.Context, nil
		})
		return err
	})
	return t, err
}

// placement is the worker of a new task's owner: sp.On or the most free
// for a top-level task (Place), the parent owner's for a subtask without
// one. A task whose owner nobody starts (runtime none) is placed only
// when asked.
func placement(st state.State, sp Spec, live []*store.Task) (string, error) {
	switch {
	case sp.ParentID == "" && sp.On == "" && sp.Runtime == config.RuntimeNone:
		return "", nil
	case sp.ParentID == "" || sp.On != "":
		return Place(st, sp.On, live)
	}
	parent, err := st.Task(sp.ParentID)
	if err != nil {
		return "", err
	}
	owner, err := st.Agent(parent.Owner)
	if err != nil {
		return "", nil // an owner record gone: placed nowhere, as without workers
	}
	return owner.Worker, nil
}

// MaxContext bounds the context a parent hands a subtask (bytes).
const MaxContext = 256 << 10

// Subtask is pm subtask: a child of parent with its own owner, on runtime
// (default: the parent's) and the parent's model, placed on worker on
// (default: where its parent's owner runs). The owner check is the
// caller's.
func Subtask(s *store.Store, l *agent.Launcher, actor store.Actor, parent *store.Task, description string, context []byte, runtime config.RuntimeName, on string) (*store.Task, error) {
	if len(context) > MaxContext {
		return nil, errs.Usagef("keep context under 256 KiB", "context of %d bytes is too long", len(context))
	}
	if runtime == "" {
		runtime = parent.Runtime
	}
	return Create(s, l, actor, Spec{Description: description, ParentID: parent.ID, Runtime: runtime, Model: parent.Model, Context: context, On: on})
}

// childrenHeld reads t's subtasks; the caller is in the tasks section, so
// a listed child not found is a creation killed before its record, never
// one in flight, and is left out.
func childrenHeld(st state.State, t *store.Task) ([]*store.Task, error) {
	out := make([]*store.Task, 0, len(t.Children))
	for _, c := range t.Children {
		ct, err := st.Task(c)
		if errors.Is(err, state.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ct)
	}
	return out, nil
}

// childrenOf is childrenHeld for a caller outside the tasks section: a
// listed child not found may be being created right now, so the lookup is
// repeated in the section, where it is settled either way.
func childrenOf(st state.State, taskID string) (*store.Task, []*store.Task, error) {
	t, err := st.Task(taskID)
	if err != nil {
		return nil, nil, err
	}
	kids, err := childrenHeld(st, t)
	if err != nil || len(kids) == len(t.Children) {
		return t, kids, err
	}
	err = st.WithTasks(func() error {
		if t, err = st.Task(taskID); err != nil {
			return err
		}
		kids, err = childrenHeld(st, t)
		return err
	})
	return t, kids, err
}
