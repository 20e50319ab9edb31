package store

import (
	"strconv"
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
)

var agentKeys = []string{
	agentName: "name", agentPrompt: "prompt", agentRole: "role", agentTaskID: "task_id",
	agentPhaseID: "phase_id", agentPid: "pid", agentPidStart: "pid_start", agentRun: "run",
	agentRuntime: "runtime", agentModel: "model", agentStatus: "status", agentRestarts: "restarts",
	agentExitCode: "exit_code", agentReason: "reason", agentUsage: "usage", agentSandbox: "sandbox",
	agentCodeDesigner: "code_designer", agentActivity: "activity", agentActiveAt: "active_at",
	agentCreatedAt: "created_at", agentStartedAt: "started_at", agentEndedAt: "ended_at",
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
		var s string
		switch k {
		case agentPid:
			var n int64
			n, next, ok = intValue(raw, i, strconv.IntSize)
			out.Pid = int(n)
			return next, ok
		case agentPidStart:
			out.PidStart, next, ok = uintValue(raw, i, 64)
			return next, ok
		case agentRestarts:
			var n int64
			n, next, ok = intValue(raw, i, strconv.IntSize)
			out.Restarts = int(n)
			return next, ok
		case agentExitCode:
			var n int64
			n, next, ok = intValue(raw, i, strconv.IntSize)
			code := int(n)
			out.ExitCode = &code
			return next, ok
		case agentUsage:
			return out.Usage.scan(raw, i)
		case agentCodeDesigner:
			out.CodeDesigner = new(designmode.Mode)
			return scanMode(out.CodeDesigner, raw, i, &doc)
		case agentActiveAt:
			out.ActiveAt, next, ok = timePtrValue(raw, i)
			return next, ok
		case agentCreatedAt:
			out.CreatedAt, next, ok = timeValue(raw, i)
			return next, ok
		case agentStartedAt:
			out.StartedAt, next, ok = timePtrValue(raw, i)
			return next, ok
		case agentEndedAt:
			out.EndedAt, next, ok = timePtrValue(raw, i)
			return next, ok
		}
		if s, next, ok = stringValue(raw, i, &doc); !ok {
			return 0, false
		}
		switch k {
		case agentName:
			out.Name = s
		case agentPrompt:
			out.Prompt = s
		case agentRole:
			out.Role = s
		case agentTaskID:
			out.TaskID = s
		case agentPhaseID:
			out.PhaseID = s
		case agentRun:
			out.Run = s
		case agentRuntime:
			out.Runtime = RuntimeName(s)
		case agentModel:
			out.Model = s
		case agentStatus:
			out.Status = AgentStatus(s)
		case agentReason:
			out.Reason = s
		case agentSandbox:
			out.Sandbox = s
		case agentActivity:
			out.Activity = s
		}
		return next, true
	})
	if !wholeDocument(raw, i, ok) {
		return false
	}
	*a = out
	return true
}

var usageKeys = []string{"turns", "tool_calls", "tokens"}

// scan scans a Usage object at raw[i] into the zero u.
func (u *Usage) scan(raw []byte, i int) (next int, ok bool) {
	return scanObject(raw, i, usageKeys, func(k, i int) (next int, ok bool) {
		n, next, ok := intValue(raw, i, 64)
		switch k {
		case 0:
			u.Turns = n
		case 1:
			u.ToolCalls = n
		case 2:
			u.Tokens = n
		}
		return next, ok
	})
}

var modeKeys = []string{"enabled", "source", "since"}

// scanMode scans a designmode.Mode object at raw[i] into the zero m.
func scanMode(m *designmode.Mode, raw []byte, i int, doc *string) (next int, ok bool) {
	return scanObject(raw, i, modeKeys, func(k, i int) (next int, ok bool) {
		switch k {
		case 0:
			m.Enabled, next, ok = boolValue(raw, i)
		case 1:
			var s string
			s, next, ok = stringValue(raw, i, doc)
			m.Source = designmode.Source(s)
		case 2:
			m.Since, next, ok = timePtrValue(raw, i)
		}
		return next, ok
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
		var s string
		switch k {
		case phaseMessageLimit:
			var n int64
			n, next, ok = intValue(raw, i, strconv.IntSize)
			out.MessageLimit = int(n)
			return next, ok
		case phaseRoles:
			out.Roles, next, ok = stringsValue(raw, i, &doc)
			return next, ok
		case phaseAgents:
			out.Agents, next, ok = stringsValue(raw, i, &doc)
			return next, ok
		case phaseCreatedAt:
			out.CreatedAt, next, ok = timeValue(raw, i)
			return next, ok
		case phaseClosedAt:
			out.ClosedAt, next, ok = timePtrValue(raw, i)
			return next, ok
		}
		if s, next, ok = stringValue(raw, i, &doc); !ok {
			return 0, false
		}
		switch k {
		case phaseID:
			out.ID = s
		case phaseTaskID:
			out.TaskID = s
		case phaseName:
			out.Name = s
		case phaseRules:
			out.Rules = s
		case phaseStatus:
			out.Status = PhaseStatus(s)
		case phaseCloseReason:
			out.CloseReason = CloseReason(s)
		}
		return next, true
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
