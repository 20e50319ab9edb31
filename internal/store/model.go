package store

import (
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/driver/handle"
	"github.com/plasmodium/pm/internal/gitx/pin"
)

// TaskStatus is where a task stands.
type TaskStatus string

// Task statuses.
const (
	TaskActive  TaskStatus = "active"
	TaskBlocked TaskStatus = "blocked"
	TaskDone    TaskStatus = "done"
	TaskKilled  TaskStatus = "killed"
)

// PhaseStatus is whether a phase's room is open.
type PhaseStatus string

// Phase statuses.
const (
	PhaseActive PhaseStatus = "active"
	PhaseClosed PhaseStatus = "closed"
)

// CloseReason is why a phase closed.
type CloseReason string

// Reasons a phase closed.
const (
	CloseLimit  CloseReason = "limit"      // reached message_limit
	CloseEnded  CloseReason = "ended"      // pm end-phase
	CloseTask   CloseReason = "task-ended" // its task was done or killed
	CloseKilled CloseReason = "killed"
	// CloseOwnerFailed: its owner was given up on (it kept ending its turn
	// without pm done, or crashed too often), so no role talks in a room
	// nobody owns.
	CloseOwnerFailed CloseReason = "owner-failed"
)

// AgentStatus is where an agent's life stands.
type AgentStatus string

// Agent statuses.
const (
	AgentPending AgentStatus = "pending" // recorded, not started (blocked task, or runtime none)
	AgentRunning AgentStatus = "running"
	AgentExited  AgentStatus = "exited"
	AgentKilled  AgentStatus = "killed"
	AgentFailed  AgentStatus = "failed"
	// AgentDead is never written: views show it for an agent recorded
	// running whose process is gone (the supervisor has not caught up).
	AgentDead AgentStatus = "dead"
)

// Task is tasks/tk-xxxxxx/task.json.
type Task struct {
	ID          string             `json:"id"`
	Description string             `json:"description"`
	Owner       string             `json:"owner"`
	ParentID    string             `json:"parent_id,omitempty"`
	BlockedBy   []string           `json:"blocked_by"`
	Blocks      []string           `json:"blocks,omitempty"`   // tasks waiting on this one
	Children    []string           `json:"children,omitempty"` // subtasks, in creation order
	Status      TaskStatus         `json:"status"`
	Depth       int                `json:"depth"`
	Runtime     config.RuntimeName `json:"runtime"`
	Model       string             `json:"model,omitempty"`
	CreatedAt   time.Time          `json:"created_at"`
	EndedAt     *time.Time         `json:"ended_at,omitempty"`
	Commit      string             `json:"commit,omitempty"`
	// Repo is the repository pm done commits into, pinned when the task
	// was created (nil in records made before pins: pm done then commits
	// into the repository that holds the project, as it did).
	Repo    *pin.Repo `json:"repo,omitempty"`
	TaskGit           // worktree, review and merge (taskmerge.go)
}

// Live reports whether the task still counts against the active-task limit.
func (t *Task) Live() bool { return t.Status == TaskActive || t.Status == TaskBlocked }

// Phase is tasks/tk-xxxxxx/phases/ph-xxxxxx/phase.json.
type Phase struct {
	ID           string      `json:"id"`
	TaskID       string      `json:"task_id"`
	Name         string      `json:"name"`
	MessageLimit int         `json:"message_limit"`
	Roles        []string    `json:"roles"`
	Agents       []string    `json:"agents,omitempty"` // role agent names, parallel to Roles
	Rules        string      `json:"rules,omitempty"`
	Status       PhaseStatus `json:"status"`
	CreatedAt    time.Time   `json:"created_at"`
	ClosedAt     *time.Time  `json:"closed_at,omitempty"`
	CloseReason  CloseReason `json:"close_reason,omitempty"`
}

// Message is one line of messages.jsonl.
type Message struct {
	ID        string    `json:"id"`
	PhaseID   string    `json:"phase_id"`
	Author    string    `json:"author"`
	Role      string    `json:"role,omitempty"`
	Content   string    `json:"content"`
	Timestamp time.Time `json:"timestamp"`
}

// Agent is agents/<name>/agent.json.
type Agent struct {
	Name    string `json:"name"`
	Prompt  string `json:"prompt"`
	Role    string `json:"role,omitempty"`
	TaskID  string `json:"task_id,omitempty"`
	PhaseID string `json:"phase_id,omitempty"`
	// Handle names the agent's current (or last) run for the driver: the
	// host's pid and start time, serialized as "pid" and "pid_start".
	handle.Handle
	Runtime  config.RuntimeName `json:"runtime"`
	Model    string             `json:"model,omitempty"`
	Status   AgentStatus        `json:"status"`
	Restarts int                `json:"restarts"`
	// Crashes is the supervisor's crash-loop count, on record so that it
	// outlives any one supervisor (nil until the agent first crashes; a
	// pointer keeps Agent comparable, which DecodeFast relies on).
	Crashes  *CrashLog `json:"crashes,omitempty"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Usage    Usage     `json:"usage"`
	// Sandbox is what confines the commands this agent runs, as its host
	// found it when it started (agent.SandboxOf): "landlock", "landlock (no
	// mount namespace)", "off (config)" or "none (...)".
	Sandbox string `json:"sandbox,omitempty"`
	// CodeDesigner is code-designer mode for this agent: on or off, which
	// source decided it and since when (internal/designmode); nil until
	// decided (a host decides it when it starts an llm agent).
	CodeDesigner *designmode.Mode `json:"code_designer,omitempty"`
	Activity     string           `json:"activity,omitempty"`  // idle, working, waiting (llm runtime)
	ActiveAt     *time.Time       `json:"active_at,omitempty"` // when Activity last changed
	CreatedAt    time.Time        `json:"created_at"`
	StartedAt    *time.Time       `json:"started_at,omitempty"`
	EndedAt      *time.Time       `json:"ended_at,omitempty"`
	// Worker is the worker (pm worker --name) the agent is placed on, on
	// a hub project: only that worker starts and stops its host, and it
	// moves to another worker when that one is lost. "" runs it where pm
	// started it (the files, or a hub project without workers).
	Worker string `json:"worker,omitempty"`
	// Rejections is its task's Rejections as its last start found them (an
	// owner's): a task rejected more times than that was rejected since it
	// last started, and its owner, once not live, is started again for it
	// (agent.RejectionUnseen).
	Rejections int `json:"rejections,omitempty"`
}

// CrashLog is an agent's recent crashes: one entry per crashed run (its
// handle), those older than the crash window dropped as new ones come.
type CrashLog struct {
	Runs []Crash `json:"runs"`
}

// Crash is one crashed run of an agent, as the supervisor counted it.
type Crash struct {
	At  time.Time     `json:"at"`
	Run handle.Handle `json:"run"`
}

// IsOwner reports whether the agent owns its task (rather than playing a role in a phase).
func (a *Agent) IsOwner() bool { return a.Role == "" }

// Usage is what an llm agent has spent, kept across respawns.
type Usage struct {
	Turns     int64 `json:"turns"`
	ToolCalls int64 `json:"tool_calls"`
	Tokens    int64 `json:"tokens"`
	// USD is the known dollars of the agent's ledger entries (costs.jsonl),
	// kept here as Tokens is, so a budget check reads one record; Unpriced
	// counts its entries without dollars (unknown model, no usage
	// reported): the agent's cost is then not fully known.
	USD      float64 `json:"usd,omitempty"`
	Unpriced int64   `json:"unpriced,omitempty"`
}
