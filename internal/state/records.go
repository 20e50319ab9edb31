package state

import "github.com/plasmodium/pm/internal/store"

// The records are the store's while the codecs that read them fast
// (store/messageline.go, recorddecode.go, messagejson.go) live there: these
// aliases are the names implementations and callers use, so the records can
// move here without a caller changing. Their JSON encoding is the on-disk
// and on-the-wire format: field names never change.
type (
	Task          = store.Task
	TaskStatus    = store.TaskStatus
	Phase         = store.Phase
	PhaseStatus   = store.PhaseStatus
	CloseReason   = store.CloseReason
	Message       = store.Message
	Agent         = store.Agent
	AgentStatus   = store.AgentStatus
	Request       = store.Request
	RequestStatus = store.RequestStatus
	// MessageView is a Message decoded for a reader that keeps nothing
	// (ReadRoom): its strings alias the line.
	MessageView = store.MessageView
	// PhaseProgress is one phase an agent opened, with the task's
	// progress mark then (the loop breaker, internal/ops).
	PhaseProgress = store.PhaseProgress
)

// Statuses and reasons, as store declares them.
const (
	TaskActive  = store.TaskActive
	TaskBlocked = store.TaskBlocked
	TaskDone    = store.TaskDone
	TaskKilled  = store.TaskKilled

	PhaseActive = store.PhaseActive
	PhaseClosed = store.PhaseClosed

	CloseLimit       = store.CloseLimit
	CloseEnded       = store.CloseEnded
	CloseTask        = store.CloseTask
	CloseKilled      = store.CloseKilled
	CloseOwnerFailed = store.CloseOwnerFailed

	AgentPending = store.AgentPending
	AgentRunning = store.AgentRunning
	AgentExited  = store.AgentExited
	AgentKilled  = store.AgentKilled
	AgentFailed  = store.AgentFailed

	RequestPending  = store.RequestPending
	RequestAnswered = store.RequestAnswered
)

// RoomClosedBy is the one definition of a closed room (a closed record, a
// log holding message_limit messages, a task no longer active): every
// implementation derives Phase.Status with it.
func RoomClosedBy(p *Phase, messages int, task TaskStatus) CloseReason {
	return store.RoomClosedBy(p, messages, task)
}

// Count is tasks (oldest first, as Tasks lists them) reduced to the live
// ones (every one with all) and the number of each status: CountTasks for
// a backend that reads every task anyway.
func Count(tasks []*Task, all bool) (out []*Task, counts map[TaskStatus]int) {
	out, counts = []*Task{}, map[TaskStatus]int{}
	for _, t := range tasks {
		counts[t.Status]++
		if all || t.Live() {
			out = append(out, t)
		}
	}
	return out, counts
}

// ActivePhase is the task's active phase (its room still open, derived as
// Phases derives it), nil when there is none.
func ActivePhase(st Phases, taskID string) (*Phase, error) {
	ps, err := st.Phases(taskID)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Status == PhaseActive {
			return p, nil
		}
	}
	return nil, nil
}

// AgentsOf is the agents of task taskID, oldest first (Agents, filtered).
func AgentsOf(st Agents, taskID string) ([]*Agent, error) {
	all, err := st.Agents()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, a := range all {
		if a.TaskID == taskID {
			out = append(out, a)
		}
	}
	return out, nil
}
