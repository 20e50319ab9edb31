package store

import (
	"time"

	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// The members of Agent (driver.Handle's promoted), as agentKeys names them.
const (
	agentName = iota
	agentPrompt
	agentRole
	agentTaskID
	agentPhaseID
	agentPid
	agentPidStart
	agentRun
	agentCgroup
	agentPidsCgroup
	agentContainment
	agentRuntime
	agentModel
	agentStatus
	agentRestarts
	agentExitCode
	agentReason
	agentUsage
	agentSandbox
	agentCodeDesigner
	agentActivity
	agentActiveAt
	agentCreatedAt
	agentStartedAt
	agentEndedAt
	agentWorker
	agentRejections
)

var agentKeys = []string{
	agentName: "name", agentPrompt: "prompt", agentRole: "role", agentTaskID: "task_id",
	agentPhaseID: "phase_id", agentPid: "pid", agentPidStart: "pid_start", agentRun: "run",
	agentCgroup: "cgroup", agentPidsCgroup: "pids_cgroup", agentContainment: "containment",
	agentRuntime: "runtime", agentModel: "model", agentStatus: "status", agentRestarts: "restarts",
	agentExitCode: "exit_code", agentReason: "reason", agentUsage: "usage", agentSandbox: "sandbox",
	agentCodeDesigner: "code_designer", agentActivity: "activity", agentActiveAt: "active_at",
	agentCreatedAt: "created_at", agentStartedAt: "started_at", agentEndedAt: "ended_at",
	agentWorker: "worker", agentRejections: "rejections",
}

// DecodeFast decodes an agent.json into a zero *a without reflection
// (lockedfile.FastDecoder: every read of an agent record tries it first).
// It reports false, leaving a untouched, for anything it does not handle:
// a receiver that is not the zero Agent, invalid JSON, a repeated member,
// a nested value under a key that is not a field's, a key that might match
// a field the way encoding/json matches names, a string encoding/json would
// rewrite, a number out of its field's range, a value of another type than
// its field's; the caller then decodes with encoding/json. Whenever it
// reports true, *a is exactly what json.Unmarshal gives: FuzzDecodeAgent
// compares the two.
func (a *Agent) DecodeFast(raw []byte) bool {
	if *a != (Agent{}) {
		return false
	}
	var out Agent
	var doc string
	i, ok := scanObject(raw, skipSpace(raw, 0), agentKeys, func(k, i int) (next int, ok bool) {
		switch k {
		case agentName:
			return stringInto(raw, i, &doc, &out.Name)
		case agentPrompt:
			return stringInto(raw, i, &doc, &out.Prompt)
		case agentRole:
			return stringInto(raw, i, &doc, &out.Role)
		case agentTaskID:
			return stringInto(raw, i, &doc, &out.TaskID)
		case agentPhaseID:
			return stringInto(raw, i, &doc, &out.PhaseID)
		case agentPid:
			return intInto(raw, i, &out.Pid)
		case agentPidStart:
			return uintInto(raw, i, &out.PidStart)
		case agentRun:
			return stringInto(raw, i, &doc, &out.Run)
		case agentCgroup:
			return stringInto(raw, i, &doc, &out.Cgroup)
		case agentPidsCgroup:
			return stringInto(raw, i, &doc, &out.PidsCgroup)
		case agentContainment:
			return stringInto(raw, i, &doc, &out.Containment)
		case agentRuntime:
			return stringInto(raw, i, &doc, &out.Runtime)
		case agentModel:
			return stringInto(raw, i, &doc, &out.Model)
		case agentStatus:
			return stringInto(raw, i, &doc, &out.Status)
		case agentRestarts:
			return intInto(raw, i, &out.Restarts)
		case agentExitCode:
			out.ExitCode = new(int)
			return intInto(raw, i, out.ExitCode)
		case agentReason:
			return stringInto(raw, i, &doc, &out.Reason)
		case agentUsage:
			return out.Usage.scan(raw, i)
		case agentSandbox:
			return stringInto(raw, i, &doc, &out.Sandbox)
		case agentCodeDesigner:
			out.CodeDesigner = new(designmode.Mode)
			return scanMode(out.CodeDesigner, raw, i, &doc)
		case agentActivity:
			return stringInto(raw, i, &doc, &out.Activity)
		case agentActiveAt:
			return timePtrInto(raw, i, &out.ActiveAt)
		case agentCreatedAt:
			return timeInto(raw, i, &out.CreatedAt)
		case agentStartedAt:
			return timePtrInto(raw, i, &out.StartedAt)
		case agentWorker:
			return stringInto(raw, i, &doc, &out.Worker)
		case agentRejections:
			return intInto(raw, i, &out.Rejections)
		}
		return timePtrInto(raw, i, &out.EndedAt) // agentEndedAt
	})
	if !wholeDocument(raw, i, ok) {
		return false
	}
	*a = out
	return true
}

var usageKeys = []string{"turns", "tool_calls", "tokens", "unpriced", "usd"}

// scan scans a Usage object at raw[i] into the zero u.
func (u *Usage) scan(raw []byte, i int) (next int, ok bool) {
	return scanObject(raw, i, usageKeys, func(k, i int) (next int, ok bool) {
		if k == 4 {
			return floatInto(raw, i, &u.USD)
		}
		return intInto(raw, i, [...]*int64{&u.Turns, &u.ToolCalls, &u.Tokens, &u.Unpriced}[k])
	})
}

var modeKeys = []string{"enabled", "source", "since"}

// scanMode scans a designmode.Mode object at raw[i] into the zero m.
func scanMode(m *designmode.Mode, raw []byte, i int, doc *string) (next int, ok bool) {
	return scanObject(raw, i, modeKeys, func(k, i int) (next int, ok bool) {
		switch k {
		case 0:
			return boolInto(raw, i, &m.Enabled)
		case 1:
			return stringInto(raw, i, doc, &m.Source)
		}
		return timePtrInto(raw, i, &m.Since)
	})
}

// The members of Phase, as phaseKeys names them.
const (
	phaseID = iota
	phaseTaskID
	phaseName
	phaseMessageLimit
	phaseRoles
	phaseAgents
	phaseRules
	phaseStatus
	phaseCreatedAt
	phaseClosedAt
	phaseCloseReason
)

var phaseKeys = []string{
	phaseID: "id", phaseTaskID: "task_id", phaseName: "name", phaseMessageLimit: "message_limit",
	phaseRoles: "roles", phaseAgents: "agents", phaseRules: "rules", phaseStatus: "status",
	phaseCreatedAt: "created_at", phaseClosedAt: "closed_at", phaseCloseReason: "close_reason",
}

// DecodeFast decodes a phase.json into a zero *p without reflection, as
// Agent.DecodeFast decodes an agent.json (the same contract; FuzzDecodePhase
// compares it with json.Unmarshal).
func (p *Phase) DecodeFast(raw []byte) bool {
	if !p.isZero() {
		return false
	}
	var out Phase
	var doc string
	i, ok := scanObject(raw, skipSpace(raw, 0), phaseKeys, func(k, i int) (next int, ok bool) {
		switch k {
		case phaseID:
			return stringInto(raw, i, &doc, &out.ID)
		case phaseTaskID:
			return stringInto(raw, i, &doc, &out.TaskID)
		case phaseName:
			return stringInto(raw, i, &doc, &out.Name)
		case phaseMessageLimit:
			return intInto(raw, i, &out.MessageLimit)
		case phaseRoles:
			return stringsInto(raw, i, &doc, &out.Roles)
		case phaseAgents:
			return stringsInto(raw, i, &doc, &out.Agents)
		case phaseRules:
			return stringInto(raw, i, &doc, &out.Rules)
		case phaseStatus:
			return stringInto(raw, i, &doc, &out.Status)
		case phaseCreatedAt:
			return timeInto(raw, i, &out.CreatedAt)
		case phaseClosedAt:
			return timePtrInto(raw, i, &out.ClosedAt)
		}
		return stringInto(raw, i, &doc, &out.CloseReason) // phaseCloseReason
	})
	if !wholeDocument(raw, i, ok) {
		return false
	}
	*p = out
	return true
}

// isZero reports whether p is the zero Phase (Phase has slices: no ==).
func (p *Phase) isZero() bool {
	return p.ID == "" && p.TaskID == "" && p.Name == "" && p.MessageLimit == 0 && p.Roles == nil &&
		p.Agents == nil && p.Rules == "" && p.Status == "" && p.CreatedAt == (time.Time{}) &&
		p.ClosedAt == nil && p.CloseReason == ""
}

var (
	_ lockedfile.FastDecoder = (*Agent)(nil)
	_ lockedfile.FastDecoder = (*Phase)(nil)
)
