package bench

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/store"
)

// StateSpec sizes a generated state directory.
type StateSpec struct {
	Tasks  int // tasks; all done or killed except one active task with an active phase
	Events int // lines of events.jsonl
	// MessagesPerPhase is how many messages each generated phase holds.
	MessagesPerPhase int
	// ActiveLimit is the active phase's message_limit (0: 50).
	ActiveLimit int
}

// State is what Generate made.
type State struct {
	Root        string // the .plasmodium directory
	ActiveTask  string // the one active task
	ActivePhase string // its active phase
	Owner       string // the active task's owner agent (runtime none)
	SomeTask    string // a done task in the middle of the list
}

// Generate writes a state directory under dir directly with the store's
// types (no pm process, no fsync: building it is not what is measured): spec.Tasks
// tasks, each with an owner agent record and one phase of
// spec.MessagesPerPhase messages; every task is done (one in a hundred
// killed) except the last, which is active with an active phase. It then
// writes spec.Events lines of events.jsonl.
func Generate(dir string, spec StateSpec) (*State, error) {
	root, _, err := store.Init(dir, time.Now)
	if err != nil {
		return nil, err
	}
	st := &State{Root: root}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range spec.Tasks {
		tid := TaskID(i)
		pid := fmt.Sprintf("ph-%06x", (i*7919+1)&0xffffff)
		owner := fmt.Sprintf("owner_%06x", i)
		created := base.Add(time.Duration(i) * time.Minute)
		ended := created.Add(30 * time.Second)
		t := store.Task{ID: tid, Description: fmt.Sprintf("generated task %d: build part %d of the landing page", i, i),
			Owner: owner, BlockedBy: []string{}, Status: store.TaskDone, Runtime: config.RuntimeNone, CreatedAt: created, EndedAt: &ended}
		ph := store.Phase{ID: pid, TaskID: tid, Name: "Brainstorm", MessageLimit: max(spec.MessagesPerPhase, 1),
			Roles: []string{"designer", "developer"}, Status: store.PhaseClosed, CreatedAt: created, ClosedAt: &ended, CloseReason: store.CloseLimit}
		ag := store.Agent{Name: owner, Prompt: "owner", TaskID: tid, Runtime: config.RuntimeNone, Status: store.AgentExited, CreatedAt: created}
		switch {
		case i == spec.Tasks-1:
			t.Status, t.EndedAt = store.TaskActive, nil
			ph.Status, ph.ClosedAt, ph.CloseReason, ph.MessageLimit = store.PhaseActive, nil, "", cmp.Or(spec.ActiveLimit, 50)
			ag.Status = store.AgentPending
			st.ActiveTask, st.ActivePhase, st.Owner = tid, pid, owner
		case i%100 == 99:
			t.Status = store.TaskKilled
			ph.CloseReason = store.CloseKilled
		}
		if i == spec.Tasks/2 {
			st.SomeTask = tid
		}
		s := &store.Store{Root: root}
		if err := os.MkdirAll(s.PhaseDir(tid, pid), 0o755); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(s.AgentDir(owner), 0o755); err != nil {
			return nil, err
		}
		if err := writeJSON(s.TaskPath(tid), t); err != nil {
			return nil, err
		}
		if err := writeJSON(s.PhasePath(tid, pid), ph); err != nil {
			return nil, err
		}
		if err := writeJSON(s.AgentPath(owner), ag); err != nil {
			return nil, err
		}
		var msgs strings.Builder
		for k := range spec.MessagesPerPhase {
			line, _ := json.Marshal(store.Message{ID: fmt.Sprintf("msg-%06x", (i*31+k)&0xffffff), PhaseID: pid, Author: owner,
				Content: fmt.Sprintf("message %d of task %d", k, i), Timestamp: created.Add(time.Duration(k) * time.Second)})
			msgs.Write(line)
			msgs.WriteByte('\n')
		}
		if err := os.WriteFile(s.MessagesPath(tid, pid), []byte(msgs.String()), 0o644); err != nil {
			return nil, err
		}
	}
	// The task files were written directly: index them as pm would have.
	if err := (&store.Store{Root: root}).RepairTaskIndex(); err != nil {
		return nil, err
	}
	return st, WriteEvents(filepath.Join(root, "events.jsonl"), spec.Events)
}

// TaskID is the i-th generated task id: distinct for i < 2^24.
func TaskID(i int) string { return fmt.Sprintf("tk-%06x", (i*40503+17)&0xffffff) }

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// WriteEvents writes n realistic bus.Event lines to path (appending).
func WriteEvents(path string, n int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		ev := bus.Event{Time: base.Add(time.Duration(i) * time.Millisecond), Kind: bus.EvMessage, Actor: "owner_000001",
			TaskID: "tk-000011", PhaseID: "ph-000001", MsgID: fmt.Sprintf("msg-%06x", i&0xffffff),
			Text: fmt.Sprintf("event %d: a message posted to the room", i), Data: map[string]any{"n": i%50 + 1, "limit": 50}}
		if err := enc.Encode(ev); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
