package ops

import (
	"context"
	"errors"
	"strconv"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// TaskInput is pm task.
type TaskInput struct {
	Description string             `json:"description" jsonschema:"what the task must achieve"`
	BlockedBy   []string           `json:"blocked_by,omitempty" jsonschema:"task ids tk-... that must be done first"`
	Runtime     config.RuntimeName `json:"runtime,omitempty" jsonschema:"how the owner runs: llm, exec or none (default from config.json)"`
	Model       string             `json:"model,omitempty" jsonschema:"model for llm agents"`
	Review      bool               `json:"review,omitempty" jsonschema:"hold its merge for pm merge or pm reject"`
	// On places the task's agents on a worker (pm task --on, MCP's
	// create_task, the dashboard's new-task form: one validation,
	// task.Place, before anything is written).
	On string `json:"on,omitempty" jsonschema:"the worker to run its agents on (pm workers lists the live ones); default: the live worker with the most free capacity, or none when the project has no workers"`
}

// CreateTask creates a task and starts its owner agent (or leaves it
// blocked until its blockers are done). A runtime that cannot run is
// refused before anything is written.
func CreateTask(ctx context.Context, sess *Session, in TaskInput) (*store.Task, error) {
	if err := CheckRuntime(sess, in.Runtime, in.Model); err != nil {
		return nil, err
	}
	l, err := sess.launcher()
	if err != nil {
		return nil, err
	}
	owner, err := lookupPO(sess, "owner")
	if err != nil {
		return nil, err
	}
	mode, err := codeDesigner(sess, owner)
	if err != nil {
		return nil, err
	}
	return task.Create(sess.Store, l, sess.Actor, task.Spec{Description: in.Description, BlockedBy: in.BlockedBy, Runtime: in.Runtime, Model: in.Model, On: in.On,
		CodeDesigner: &mode, Review: in.Review})
}

// StatusInput is pm status.
type StatusInput struct {
	Task string `json:"task,omitempty" jsonschema:"tk-...; default: yours, else all live tasks"`
	All  bool   `json:"all,omitempty" jsonschema:"list finished tasks too"`
}

// StatusResult is one task in detail (View) or the overview (Summary),
// each with the health of its tasks.
type StatusResult struct {
	View    *TaskStatus    `json:"view,omitempty"`
	Summary *StatusSummary `json:"summary,omitempty"`
}

// TaskStatus is pm status tk-...: the task's view, its health and its
// pending requests.
type TaskStatus struct {
	*task.View
	Health   task.Health      `json:"health"`
	Requests []*store.Request `json:"requests"`
	// Warnings are what is wrong beside the tasks (SupervisorWarnings).
	Warnings []string `json:"warnings,omitempty"`
	Cost     TaskCost `json:"cost"`
}

// StatusSummary is pm status: the overview with each listed task's health.
type StatusSummary struct {
	*task.Summary
	Health   map[string]task.Health `json:"health"`
	Warnings []string               `json:"warnings,omitempty"`
	// Isolation says where new tasks work (task.IsolationOf).
	Isolation string `json:"isolation"`
}

// SupervisorWarnings is what the live supervisor reports that a person
// should know: it polls the bus (inotify used up), or it cannot read some
// agent records.
func SupervisorWarnings(s *store.Store) []string {
	if !s.SupervisorWanted() || !s.SupervisorLive() {
		return nil
	}
	in := s.SupervisorInfo()
	if in == nil {
		return nil
	}
	var out []string
	if in.Polling != "" {
		out = append(out, "supervisor "+strconv.Itoa(in.Pid)+" is "+in.Polling)
	}
	if in.Blind != "" {
		out = append(out, "supervisor "+strconv.Itoa(in.Pid)+" is "+in.Blind)
	}
	for _, name := range in.Unreadable {
		out = append(out, "supervisor cannot read the record of agent "+name+" ("+s.AgentPath(name)+"); pm doctor --check lists what is wrong")
	}
	return out
}

// Status shows a task with its phases and agents: the named one, else the
// agent's own; the human without a task gets the overview.
func Status(ctx context.Context, sess *Session, in StatusInput) (StatusResult, error) {
	id, err := state.CompleteID(sess.State, ids.Task, in.Task)
	if err != nil {
		return StatusResult{}, err
	}
	if id == "" && sess.Actor.Agent != nil {
		id = sess.Actor.Agent.TaskID
	}
	pending := task.PendingRequests(sess.Store, sess.State)
	if id != "" {
		v, err := task.Describe(sess.Store, sess.State, id)
		if err != nil {
			return StatusResult{}, err
		}
		h := task.HealthOf(sess.Store, sess.State, v.Task, pending)
		if settleSeen(sess, h) {
			if v, err = task.Describe(sess.Store, sess.State, id); err != nil {
				return StatusResult{}, err
			}
			h = task.HealthOf(sess.Store, sess.State, v.Task, pending)
		}
		ts := &TaskStatus{View: v, Health: h, Requests: []*store.Request{}, Warnings: SupervisorWarnings(sess.Store),
			Cost: taskCost(v.Agents, sess.Store.Config().Budgets.Task.MaxUSD)}
		for _, r := range pending {
			if r.TaskID == id {
				ts.Requests = append(ts.Requests, r)
			}
		}
		return StatusResult{View: ts}, nil
	}
	out, err := summary(sess, in.All, pending)
	if err != nil {
		return StatusResult{}, err
	}
	for _, h := range out.Health {
		if settleSeen(sess, h) {
			if out, err = summary(sess, in.All, pending); err != nil {
				return StatusResult{}, err
			}
			break
		}
	}
	return StatusResult{Summary: out}, nil
}

// summary is the overview with each listed task's health.
func summary(sess *Session, all bool, pending []*store.Request) (*StatusSummary, error) {
	sum, err := task.Summarize(sess.State, all)
	if err != nil {
		return nil, err
	}
	out := &StatusSummary{Summary: sum, Health: map[string]task.Health{}, Warnings: SupervisorWarnings(sess.Store), Isolation: task.IsolationOf(sess.Store)}
	for _, t := range sum.Tasks {
		out.Health[t.ID] = task.HealthOf(sess.Store, sess.State, t, pending)
	}
	return out, nil
}

// settleSeen repairs, where it is seen, a state only a crash leaves (h.Repair:
// a task blocked only by done tasks, an agent of a live task or open room
// never started, a role with no agent): it runs task.Settle when this
// session can start agents, and reports whether it did (the caller reads
// again).
func settleSeen(sess *Session, h task.Health) bool {
	if !h.Repair || sess.Launcher == nil {
		return false
	}
	if _, err := task.Settle(sess.Store, sess.Launcher, sess.Actor); err != nil {
		sess.Store.Warnf("settle: %v", err)
	}
	return true
}

// SubtaskInput is pm subtask.
type SubtaskInput struct {
	Task        string             `json:"task,omitempty" jsonschema:"parent tk-...; default: yours"`
	Description string             `json:"description" jsonschema:"what the subtask must achieve"`
	Context     string             `json:"context,omitempty" jsonschema:"what its owner needs to know"`
	Runtime     config.RuntimeName `json:"runtime,omitempty" jsonschema:"llm, exec or none (default: yours)"`
	// On places the subtask's agents on a worker (pm subtask --on, the
	// model tools' subtask, MCP's create_subtask): checked by task.Place
	// as TaskInput.On is (an unknown or gone worker: Try: pm workers).
	On string `json:"on,omitempty" jsonschema:"worker to run it on (pm workers); default: its parent owner's"`
}

// SubtaskResult is the child and its parent.
type SubtaskResult struct {
	Task   *store.Task `json:"task"`
	Parent *store.Task `json:"parent"`
}

// Partial reports that the child exists even though the result comes with
// an error.
func (r SubtaskResult) Partial() bool { return r.Task != nil }

// Subtask creates a child task with its own owner agent (owners only).
func Subtask(ctx context.Context, sess *Session, in SubtaskInput) (SubtaskResult, error) {
	parent, err := OwnTask(sess.Store, sess.State, sess.Actor, in.Task)
	if err != nil {
		return SubtaskResult{}, err
	}
	rt := in.Runtime
	if rt == "" {
		rt = parent.Runtime
	}
	if err := CheckRuntime(sess, rt, parent.Model); err != nil {
		return SubtaskResult{}, err
	}
	l, err := sess.launcher()
	if err != nil {
		return SubtaskResult{}, err
	}
	t, err := task.Subtask(sess.Store, l, sess.Actor, parent, in.Description, []byte(in.Context), in.Runtime, in.On)
	return SubtaskResult{Task: t, Parent: parent}, err
}

// WaitChildrenInput is pm wait-children.
type WaitChildrenInput struct {
	Task    string `json:"task,omitempty" jsonschema:"tk-...; default: yours"`
	Timeout string `json:"timeout,omitempty" jsonschema:"e.g. \"30m\" (default: no limit)"`
}

// WaitChildrenResult is the task's children as they ended (or stood when
// the wait timed out).
type WaitChildrenResult struct {
	Task     *store.Task   `json:"task"`
	Children []*store.Task `json:"children"`
}

// Partial: on a timeout the children are still reported.
func (r WaitChildrenResult) Partial() bool { return r.Task != nil }

// WaitChildren blocks until every subtask of the task is done (owners
// only); exit 124 when Timeout passes first.
func WaitChildren(ctx context.Context, sess *Session, in WaitChildrenInput) (WaitChildrenResult, error) {
	d, err := parseTimeout(in.Timeout)
	if err != nil {
		return WaitChildrenResult{}, err
	}
	t, err := OwnTask(sess.Store, sess.State, sess.Actor, in.Task)
	if err != nil {
		return WaitChildrenResult{}, err
	}
	defer sess.KeepSupervisor(ctx)()
	children, err := task.WaitChildren(ctx, sess.State, t.ID, d)
	if children == nil {
		children = []*store.Task{}
	}
	return WaitChildrenResult{Task: t, Children: children}, err
}

// DoneInput is pm done.
type DoneInput struct {
	Task string `json:"task,omitempty" jsonschema:"tk-...; default: yours"`
}

// Done marks the task done and commits the work to git (owners only).
func Done(ctx context.Context, sess *Session, in DoneInput) (*task.DoneResult, error) {
	t, err := OwnTask(sess.Store, sess.State, sess.Actor, in.Task)
	if err != nil {
		return nil, err
	}
	l, err := sess.launcher()
	if err != nil {
		return nil, err
	}
	if err := Confirm(ctx, sess, Call{Tool: "done", Args: argsJSON(in), Subject: t.ID}); err != nil {
		return nil, err
	}
	res, err := task.Done(sess.Store, l, sess.Actor, t.ID)
	if err == nil {
		err = settleRequests(sess)
	}
	return res, err
}

// settleRequests marks moot the requests a kill, restart or done made moot
// (request.Settle): nobody is left to act on their answer.
func settleRequests(sess *Session) error {
	_, err := request.Settle(sess.Store, sess.State, sess.Actor)
	return err
}

// KillInput is pm kill.
type KillInput struct {
	Task    string `json:"task" jsonschema:"task id tk-... to kill, with its subtasks"`
	Restart bool   `json:"restart,omitempty" jsonschema:"start a fresh owner with the same description"`
}

// Kill ends every agent of a task and its subtasks; Restart starts a fresh
// owner for the task. An agent may kill only subtasks of its own task
// (CheckKill).
func Kill(ctx context.Context, sess *Session, in KillInput) (*task.KillResult, error) {
	var err error
	if in.Task, err = state.CompleteID(sess.State, ids.Task, in.Task); err != nil {
		return nil, err
	}
	if !sess.Actor.IsHuman() {
		t, err := sess.State.Task(in.Task)
		if err != nil {
			return nil, err
		}
		if err := CheckKill(sess.Store, sess.State, sess.Actor, t); err != nil {
			return nil, err
		}
		if err := Confirm(ctx, sess, Call{Tool: "kill", Args: argsJSON(in), Subject: t.ID}); err != nil {
			return nil, err
		}
	}
	l, err := sess.launcher()
	if err != nil {
		return nil, err
	}
	res, err := task.Kill(sess.Store, l, sess.Actor, in.Task, in.Restart)
	if errors.Is(err, store.ErrCorrupt) && sess.Actor.IsHuman() && !in.Restart {
		return killCorrupt(sess, l, in.Task, err)
	}
	if err == nil {
		err = settleRequests(sess)
	}
	return res, residentHint(sess.Store, sess.State, in.Task, err)
}

// ResetInput is pm reset.
type ResetInput struct {
	Force bool `json:"force,omitempty" jsonschema:"reset even while tasks are live (their agents are killed first)"`
}

// Reset deletes all tasks, agents, requests, logs and events, keeping
// config.json and prompts.
// Agents may not reset (CheckReset).
func Reset(ctx context.Context, sess *Session, in ResetInput) (*task.ResetResult, error) {
	if err := CheckReset(sess.Actor); err != nil {
		return nil, err
	}
	return task.Reset(sess.Store, sess.State, sess.Actor, in.Force)
}

// killCorrupt ends the agents of a task whose task.json does not parse: the
// processes are what a person needs gone; the record is left for them to
// fix or remove (the error says where).
func killCorrupt(sess *Session, l *agent.Launcher, id string, cause error) (*task.KillResult, error) {
	agents, err := state.AgentsOf(sess.State, id)
	if err != nil {
		return nil, err
	}
	res := &task.KillResult{Tasks: []string{}, Agents: []string{}}
	for _, a := range agents {
		if err := l.Kill(sess.Actor, a.Name); err != nil {
			return res, err
		}
		res.Agents = append(res.Agents, a.Name)
	}
	sess.Store.Warnf("%v; its agents were stopped, the record was left as it is (fix it, or remove %s)", cause, sess.Store.TaskDir(id))
	return res, nil
}

// TaskHealth is one task's health now (the dashboard sends it with each
// event that names the task, so transitions the server derives from several
// records reach the page without a snapshot).
func TaskHealth(sess *Session, id string) (task.Health, error) {
	t, err := sess.State.Task(id)
	if err != nil {
		return task.Health{}, err
	}
	var pending []*store.Request
	for _, r := range task.PendingRequests(sess.Store, sess.State) {
		if r.TaskID == id {
			pending = append(pending, r)
		}
	}
	h := task.HealthOf(sess.Store, sess.State, t, pending)
	if settleSeen(sess, h) {
		if t, err = sess.State.Task(id); err != nil {
			return task.Health{}, err
		}
		h = task.HealthOf(sess.Store, sess.State, t, pending)
	}
	return h, nil
}
