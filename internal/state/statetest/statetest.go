// Package statetest is the conformance suite of the state interfaces
// (internal/state): every implementation runs Run from its own test with a
// constructor of empty projects, and passes it. It checks each method's
// contract as state/doc.go writes it: reads after acknowledged writes,
// not-found and invalid errors, updates that lose nothing, the exact room
// limit under concurrent writers, closed rooms refusing, derived room
// state, mailbox positions, watch wake-ups.
package statetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
)

// Run runs the suite; open returns a new, empty project for each test.
func Run(t *testing.T, open func(t *testing.T) state.State) {
	tests := []struct {
		name string
		fn   func(t *testing.T, st state.State)
	}{
		{"TaskNotFound", testTaskNotFound},
		{"TaskCreateRead", testTaskCreateRead},
		{"TaskBuildErrorWritesNothing", testTaskBuildError},
		{"TaskUpdate", testTaskUpdate},
		{"TaskLiveAndCounts", testTaskLiveAndCounts},
		{"TaskConcurrentUpdatesLoseNothing", testTaskConcurrentUpdates},
		{"WithTasksExcludes", testWithTasksExcludes},
		{"Reset", testReset},
		{"IDsWithPrefix", testIDsWithPrefix},
		{"PhaseCreateRead", testPhaseCreateRead},
		{"PhaseNotFound", testPhaseNotFound},
		{"RoomExactLimitUnderRace", testRoomExactLimit},
		{"RoomClosedRefuses", testRoomClosedRefuses},
		{"RoomDerivedFromTask", testRoomDerivedFromTask},
		{"RoomExtend", testRoomExtend},
		{"RoomMessageCount", testRoomMessageCount},
		{"RoomRead", testRoomRead},
		{"RoomFollow", testRoomFollow},
		{"RoomLastMessages", testRoomLastMessages},
		{"PhaseProgress", testPhaseProgress},
		{"AgentCreateOnce", testAgentCreateOnce},
		{"AgentUpdateRemove", testAgentUpdateRemove},
		{"AgentsChecked", testAgentsChecked},
		{"Mailbox", testMailbox},
		{"MailboxEnd", testMailboxEnd},
		{"Requests", testRequests},
		{"Designs", testDesigns},
		{"DesignCopyAndLock", testDesignCopyAndLock},
		{"PromptsCreateOnce", testPromptsCreateOnce},
		{"SeenMarks", testSeenMarks},
		{"WatchTask", testWatchTask},
		{"WatchTaskRoom", testWatchTaskRoom},
		{"WatchAgent", testWatchAgent},
		{"WatchRequests", testWatchRequests},
		{"WatchContextEnds", testWatchContextEnds},
		{"WatchAny", testWatchAny},
	}
	tests = append(tests, agentLogTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// at is the n-th second of a fixed day: records' times, in order.
func at(n int) time.Time { return time.Date(2026, 1, 2, 3, 4, n, 0, time.UTC) }

// wantErr fails unless err matches sentinel and carries its exit code.
func wantErr(t *testing.T, what string, err, sentinel error, code errs.Code) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: error %v, want %v", what, err, sentinel)
	}
	if got := errs.CodeOf(err); got != code {
		t.Fatalf("%s: exit code %d, want %d (%v)", what, got, code, err)
	}
}

// newTask creates a task (in WithTasks, as callers do).
func newTask(t *testing.T, st state.State, n int, edit func(*state.Task)) *state.Task {
	t.Helper()
	var out *state.Task
	err := st.WithTasks(func() error {
		var err error
		out, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			tk := &state.Task{ID: id, Description: fmt.Sprintf("task %d", n), Owner: "oak_0001", Status: state.TaskActive,
				BlockedBy: []string{}, CreatedAt: at(n)}
			if edit != nil {
				edit(tk)
			}
			return tk, nil, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newPhase opens a phase of limit messages in task tk.
func newPhase(t *testing.T, st state.State, tk *state.Task, limit int) *state.Phase {
	t.Helper()
	ph, err := st.CreatePhase(tk.ID, func(_ *state.Task, existing []*state.Phase, id string) (*state.Phase, error) {
		return &state.Phase{ID: id, TaskID: tk.ID, Name: fmt.Sprintf("p%d", len(existing)), MessageLimit: limit,
			Roles: []string{}, Status: state.PhaseActive, CreatedAt: at(len(existing))}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

func message(phaseID string, i int) state.Message {
	return state.Message{ID: ids.Default.New(ids.Message), PhaseID: phaseID, Author: "oak_0001",
		Content: fmt.Sprintf("message %d", i), Timestamp: at(i % 60)}
}

func testTaskNotFound(t *testing.T, st state.State) {
	_, err := st.Task("tk-000000")
	wantErr(t, "unknown task", err, state.ErrNotFound, errs.NotFound)
	_, err = st.Task("not-an-id")
	wantErr(t, "malformed task id", err, state.ErrInvalid, errs.Usage)
	_, err = st.UpdateTask("tk-000000", func(*state.Task) error { return nil })
	wantErr(t, "update of an unknown task", err, state.ErrNotFound, errs.NotFound)
	if _, err := st.Context("tk-000000"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("context of an unknown task: %v", err)
	}
	if err := st.WithPhases("tk-000000", func() error { return nil }); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("WithPhases of an unknown task: %v", err)
	}
}

func testTaskCreateRead(t *testing.T, st state.State) {
	parent := newTask(t, st, 1, nil)
	var child *state.Task
	err := st.WithTasks(func() error {
		var err error
		child, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			if ids.Parse(ids.Task, id) != nil {
				t.Errorf("fresh id %q is not a task id", id)
			}
			return &state.Task{ID: id, Description: "child", Owner: "elm_0002", ParentID: parent.ID, Status: state.TaskActive,
				BlockedBy: []string{}, Depth: 1, CreatedAt: at(2)}, []byte("the context"), nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Task(child.ID)
	if err != nil || got.Description != "child" || got.ParentID != parent.ID || got.Depth != 1 || !got.CreatedAt.Equal(at(2)) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	p, err := st.Task(parent.ID)
	if err != nil || !slices.Equal(p.Children, []string{child.ID}) {
		t.Fatalf("parent's children %v (%v), want the child", p.Children, err)
	}
	if c, err := st.Context(child.ID); err != nil || string(c) != "the context" {
		t.Fatalf("context %q, %v", c, err)
	}
	if c, err := st.Context(parent.ID); err != nil || len(c) != 0 {
		t.Fatalf("no context: got %q, %v", c, err)
	}
	all, err := st.Tasks()
	if err != nil || len(all) != 2 || all[0].ID != parent.ID || all[1].ID != child.ID {
		t.Fatalf("tasks %v, %v: want parent then child", all, err)
	}
	// A returned record is the caller's: changing it changes nothing stored.
	got.Description = "changed by the caller"
	if again, _ := st.Task(child.ID); again.Description != "child" {
		t.Fatalf("a caller's change reached the state: %q", again.Description)
	}
}

func testTaskBuildError(t *testing.T, st state.State) {
	boom := errors.New("boom")
	err := st.WithTasks(func() error {
		_, err := st.CreateTask(func(id string) (*state.Task, []byte, error) { return nil, nil, boom })
		return err
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want build's", err)
	}
	if all, err := st.Tasks(); err != nil || len(all) != 0 {
		t.Fatalf("tasks after a failed build: %v, %v", all, err)
	}
}

func testTaskUpdate(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	got, err := st.UpdateTask(tk.ID, func(x *state.Task) error { x.Status = state.TaskDone; return nil })
	if err != nil || got.Status != state.TaskDone {
		t.Fatalf("update returned %+v, %v", got, err)
	}
	if r, _ := st.Task(tk.ID); r.Status != state.TaskDone {
		t.Fatalf("read after update: %s", r.Status)
	}
	// ErrUnchanged writes nothing, even what fn changed before returning it.
	if _, err = st.UpdateTask(tk.ID, func(x *state.Task) error { x.Description = "not kept"; return state.ErrUnchanged }); err != nil {
		t.Fatalf("ErrUnchanged: %v", err)
	}
	if r, _ := st.Task(tk.ID); r.Description != tk.Description {
		t.Fatalf("ErrUnchanged wrote %q", r.Description)
	}
	boom := errors.New("boom")
	if _, err := st.UpdateTask(tk.ID, func(x *state.Task) error { x.Description = "not kept"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn's error: %v", err)
	}
	if r, _ := st.Task(tk.ID); r.Description != tk.Description {
		t.Fatalf("a refused update was written: %q", r.Description)
	}
}

func testTaskConcurrentUpdates(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := st.UpdateTask(tk.ID, func(x *state.Task) error {
				x.Blocks = append(x.Blocks, fmt.Sprintf("tk-%06d", i))
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	r, err := st.Task(tk.ID)
	if err != nil || len(r.Blocks) != n {
		t.Fatalf("%d updates landed of %d (%v)", len(r.Blocks), n, err)
	}
}

// LiveTasks and CountTasks: the live tasks oldest first (creation order
// differs from CreatedAt's here), the counts of every status.
func testTaskLiveAndCounts(t *testing.T, st state.State) {
	statuses := []state.TaskStatus{state.TaskDone, state.TaskActive, state.TaskKilled, state.TaskBlocked, state.TaskDone}
	byStatus := map[state.TaskStatus][]string{}
	for i, status := range statuses {
		tk := newTask(t, st, 10-i, nil) // created newest first
		if _, err := st.UpdateTask(tk.ID, func(x *state.Task) error { x.Status = status; return nil }); err != nil {
			t.Fatal(err)
		}
		byStatus[status] = append(byStatus[status], tk.ID)
	}
	ids := func(ts []*state.Task) []string {
		out := []string{}
		for _, x := range ts {
			out = append(out, x.ID)
		}
		return out
	}
	wantLive := []string{byStatus[state.TaskBlocked][0], byStatus[state.TaskActive][0]} // oldest first
	live, err := st.LiveTasks()
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(live); !slices.Equal(got, wantLive) {
		t.Fatalf("LiveTasks: %v, want %v", got, wantLive)
	}
	wantCounts := map[state.TaskStatus]int{state.TaskDone: 2, state.TaskActive: 1, state.TaskKilled: 1, state.TaskBlocked: 1}
	for _, all := range []bool{false, true} {
		tasks, counts, err := st.CountTasks(all)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(counts, wantCounts) {
			t.Fatalf("CountTasks(%v) counts %v, want %v", all, counts, wantCounts)
		}
		want := wantLive
		if all {
			all, err := st.Tasks()
			if err != nil {
				t.Fatal(err)
			}
			want = ids(all)
		}
		if got := ids(tasks); !slices.Equal(got, want) {
			t.Fatalf("CountTasks(%v) lists %v, want %v", all, got, want)
		}
	}
}

func testWithTasksExcludes(t *testing.T, st state.State) {
	var inside, most int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_ = st.WithTasks(func() error {
				mu.Lock()
				inside++
				most = max(most, inside)
				mu.Unlock()
				// Make way for another goroutine: were the section not
				// exclusive, it would enter now.
				for range 100 {
					_, _ = st.Tasks()
				}
				mu.Lock()
				inside--
				mu.Unlock()
				return nil
			})
		})
	}
	wg.Wait()
	if most != 1 {
		t.Fatalf("%d runs of WithTasks overlapped", most)
	}
}

func testPhaseCreateRead(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	thenRan := false
	ph, err := st.CreatePhase(tk.ID, func(task *state.Task, existing []*state.Phase, id string) (*state.Phase, error) {
		if task.ID != tk.ID || len(existing) != 0 || ids.Parse(ids.Phase, id) != nil {
			t.Errorf("build got task %s, %d phases, id %q", task.ID, len(existing), id)
		}
		return &state.Phase{ID: id, TaskID: tk.ID, Name: "design", MessageLimit: 4, Roles: []string{"critic"},
			Status: state.PhaseActive, CreatedAt: at(0)}, nil
	}, func(p *state.Phase) error {
		thenRan = p.Name == "design"
		return nil
	})
	if err != nil || !thenRan {
		t.Fatalf("create: %v (then ran: %v)", err, thenRan)
	}
	second := newPhase(t, st, tk, 3)
	for _, get := range []func() (*state.Phase, error){
		func() (*state.Phase, error) { return st.Phase(tk.ID, ph.ID) },
		func() (*state.Phase, error) { return st.FindPhase(ph.ID) },
	} {
		p, err := get()
		if err != nil || p.Name != "design" || p.MessageLimit != 4 || p.Status != state.PhaseActive || !slices.Equal(p.Roles, []string{"critic"}) {
			t.Fatalf("read back %+v, %v", p, err)
		}
	}
	all, err := st.Phases(tk.ID)
	if err != nil || len(all) != 2 || all[0].ID != ph.ID || all[1].ID != second.ID {
		t.Fatalf("phases %v, %v", all, err)
	}
	up, err := st.UpdatePhase(tk.ID, ph.ID, func(p *state.Phase) { p.Agents = []string{"birch_0003"} })
	if err != nil || !slices.Equal(up.Agents, []string{"birch_0003"}) {
		t.Fatalf("update phase: %+v, %v", up, err)
	}
	if p, _ := st.Phase(tk.ID, ph.ID); !slices.Equal(p.Agents, []string{"birch_0003"}) {
		t.Fatalf("read after update: %v", p.Agents)
	}
	boom := errors.New("boom")
	if _, err := st.CreatePhase(tk.ID, func(*state.Task, []*state.Phase, string) (*state.Phase, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Fatalf("build's error: %v", err)
	}
	if all, _ := st.Phases(tk.ID); len(all) != 2 {
		t.Fatalf("a refused phase was written: %d phases", len(all))
	}
	if ms, err := st.Messages(tk.ID, ph.ID); err != nil || len(ms) != 0 {
		t.Fatalf("a new room holds %v, %v", ms, err)
	}
}

func testPhaseNotFound(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	_, err := st.Phase(tk.ID, "ph-000000")
	wantErr(t, "unknown phase", err, state.ErrNotFound, errs.NotFound)
	_, err = st.FindPhase("ph-000000")
	wantErr(t, "unknown phase by id", err, state.ErrNotFound, errs.NotFound)
	_, err = st.FindPhase("nonsense")
	wantErr(t, "malformed phase id", err, state.ErrInvalid, errs.Usage)
	err = st.WithPhase(tk.ID, "ph-000000", func(state.RoomTx) error { return nil })
	wantErr(t, "WithPhase on an unknown phase", err, state.ErrNotFound, errs.NotFound)
	_, err = st.Messages(tk.ID, "ph-000000")
	wantErr(t, "messages of an unknown phase", err, state.ErrNotFound, errs.NotFound)
	_, err = st.CreatePhase("tk-000000", func(*state.Task, []*state.Phase, string) (*state.Phase, error) {
		t.Error("build ran for an unknown task")
		return nil, nil
	}, nil)
	wantErr(t, "phase of an unknown task", err, state.ErrNotFound, errs.NotFound)
	if ps, err := st.Phases(tk.ID); err != nil || len(ps) != 0 {
		t.Fatalf("phases of a task without any: %v, %v", ps, err)
	}
}

// N writers race for a room of limit places: exactly limit are
// acknowledged, the rest refused with ErrRoomFull or ErrClosed, and the room
// reads back the acknowledged messages in acknowledgement order.
func testRoomMessageCount(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 5)
	count := func(taskID, phaseID string) int {
		t.Helper()
		n, err := st.MessageCount(taskID, phaseID)
		if err != nil {
			t.Fatalf("MessageCount(%s, %s): %v", taskID, phaseID, err)
		}
		return n
	}
	if n := count(tk.ID, ph.ID); n != 0 {
		t.Fatalf("a new room counts %d", n)
	}
	for i := range 3 {
		if err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error { return tx.Append(message(ph.ID, i)) }); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(tk.ID, ph.ID); n != 3 {
		t.Fatalf("after 3 appends the room counts %d", n)
	}
	if n := count(tk.ID, "ph-000000"); n != 0 {
		t.Fatalf("an unknown phase counts %d", n)
	}
	if n := count("tk-000000", ph.ID); n != 0 {
		t.Fatalf("the phase under an unknown task counts %d", n)
	}
}

func testRoomExactLimit(t *testing.T, st state.State) {
	const limit, writers = 5, 24
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, limit)
	var mu sync.Mutex
	var acked []string
	refused := 0
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			m := message(ph.ID, i)
			err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error {
				if err := tx.Append(m); err != nil {
					return err
				}
				// Inside the transaction: the order of this list is the
				// order of acknowledgement.
				mu.Lock()
				acked = append(acked, m.ID)
				mu.Unlock()
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
			case errors.Is(err, state.ErrRoomFull) || errors.Is(err, state.ErrClosed):
				if errs.CodeOf(err) != errs.State {
					t.Errorf("refusal with exit code %d: %v", errs.CodeOf(err), err)
				}
				refused++
			default:
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(acked) != limit || refused != writers-limit {
		t.Fatalf("%d acknowledged, %d refused; want exactly %d and %d", len(acked), refused, limit, writers-limit)
	}
	ms, err := st.Messages(tk.ID, ph.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(ms))
	for i, m := range ms {
		got[i] = m.ID
	}
	if !slices.Equal(got, acked) {
		t.Fatalf("room reads %v\nacknowledged %v", got, acked)
	}
	if p, err := st.Phase(tk.ID, ph.ID); err != nil || p.Status != state.PhaseClosed || p.CloseReason != state.CloseLimit {
		t.Fatalf("a full room reads %+v, %v; want closed by limit", p, err)
	}
	if err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error {
		if n, err := tx.Count(); err != nil || n != limit {
			t.Errorf("count %d, %v", n, err)
		}
		if tx.Phase().Status != state.PhaseClosed {
			t.Errorf("the transaction sees a full room %s", tx.Phase().Status)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func testRoomClosedRefuses(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 10)
	err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error {
		if err := tx.Append(message(ph.ID, 1)); err != nil {
			return err
		}
		return tx.Update(func(p *state.Phase) { p.Status, p.CloseReason = state.PhaseClosed, state.CloseEnded })
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error {
		if tx.Phase().Status != state.PhaseClosed || tx.Phase().CloseReason != state.CloseEnded {
			t.Errorf("the transaction sees %s (%s)", tx.Phase().Status, tx.Phase().CloseReason)
		}
		return tx.Append(message(ph.ID, 2))
	})
	wantErr(t, "append to a closed room", err, state.ErrClosed, errs.State)
	if ms, _ := st.Messages(tk.ID, ph.ID); len(ms) != 1 {
		t.Fatalf("a closed room took a message: %d", len(ms))
	}
}

// A room whose task is no longer active reads closed, and WithPhase
// writes the close before fn sees the record.
func testRoomDerivedFromTask(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 10)
	if _, err := st.UpdateTask(tk.ID, func(x *state.Task) error { x.Status = state.TaskKilled; return nil }); err != nil {
		t.Fatal(err)
	}
	p, err := st.Phase(tk.ID, ph.ID)
	if err != nil || p.Status != state.PhaseClosed || p.CloseReason != state.CloseKilled {
		t.Fatalf("room of a killed task reads %+v, %v", p, err)
	}
	err = st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error {
		if tx.Phase().Status != state.PhaseClosed || tx.Phase().ClosedAt == nil {
			t.Errorf("WithPhase did not write the close: %+v", tx.Phase())
		}
		return tx.Append(message(ph.ID, 1))
	})
	wantErr(t, "append in a killed task's room", err, state.ErrClosed, errs.State)
}

// Update in a room transaction raises the limit the next Append sees.
func testRoomExtend(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 2)
	err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error {
		if err := tx.Append(message(ph.ID, 1)); err != nil {
			return err
		}
		if err := tx.Update(func(p *state.Phase) { p.MessageLimit += 2 }); err != nil {
			return err
		}
		if tx.Phase().MessageLimit != 4 {
			t.Errorf("Phase after Update: limit %d", tx.Phase().MessageLimit)
		}
		for i := 2; i <= 4; i++ {
			if err := tx.Append(message(ph.ID, i)); err != nil {
				return err
			}
		}
		if n, err := tx.Count(); err != nil || n != 4 {
			t.Errorf("count %d, %v", n, err)
		}
		return tx.Append(message(ph.ID, 5))
	})
	wantErr(t, "append past the raised limit", err, state.ErrRoomFull, errs.State)
}

func testAgentCreateOnce(t *testing.T, st state.State) {
	_, err := st.Agent("oak_0001")
	wantErr(t, "unknown agent", err, state.ErrNotFound, errs.NotFound)
	_, err = st.Agent("../etc")
	wantErr(t, "malformed agent name", err, state.ErrInvalid, errs.Usage)
	const n = 8
	var created int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ok, err := st.CreateAgent(&state.Agent{Name: "oak_0001", Prompt: fmt.Sprintf("p%d", i), Status: state.AgentPending, CreatedAt: at(1)})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				created++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if created != 1 {
		t.Fatalf("%d creators were told they created the agent; want 1", created)
	}
	if _, err := st.CreateAgent(&state.Agent{Name: "elm_0002", Status: state.AgentPending, CreatedAt: at(0)}); err != nil {
		t.Fatal(err)
	}
	all, err := st.Agents()
	if err != nil || len(all) != 2 || all[0].Name != "elm_0002" || all[1].Name != "oak_0001" {
		t.Fatalf("agents %v, %v: want oldest first", all, err)
	}
}

func testAgentUpdateRemove(t *testing.T, st state.State) {
	if _, err := st.CreateAgent(&state.Agent{Name: "oak_0001", Status: state.AgentPending, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	a, err := st.UpdateAgent("oak_0001", func(a *state.Agent) error { a.Status, a.Restarts = state.AgentRunning, 2; return nil })
	if err != nil || a.Status != state.AgentRunning || a.Restarts != 2 {
		t.Fatalf("update: %+v, %v", a, err)
	}
	if err := st.Post("oak_0001", map[string]string{"text": "hello"}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := st.RemoveAgent("oak_0001", func(a *state.Agent) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn's error: %v", err)
	}
	if _, err := st.Agent("oak_0001"); err != nil {
		t.Fatalf("a refused removal removed: %v", err)
	}
	var seen *state.Agent
	if err := st.RemoveAgent("oak_0001", func(a *state.Agent) error { seen = a; return nil }); err != nil {
		t.Fatal(err)
	}
	if seen == nil || seen.Status != state.AgentRunning {
		t.Fatalf("fn saw %+v, want the record", seen)
	}
	_, err = st.Agent("oak_0001")
	wantErr(t, "removed agent", err, state.ErrNotFound, errs.NotFound)
	_, err = st.UpdateAgent("oak_0001", func(*state.Agent) error { return nil })
	wantErr(t, "update of a removed agent", err, state.ErrNotFound, errs.NotFound)
	if next, err := st.ReadMailbox("oak_0001", 0, func(json.RawMessage, int64) error {
		t.Error("a removed agent's mailbox still holds an entry")
		return nil
	}); err != nil || next != 0 {
		t.Fatalf("removed agent's mailbox: %d, %v", next, err)
	}
	if err := st.RemoveAgent("oak_0001", func(a *state.Agent) error {
		if a != nil {
			t.Errorf("fn saw %+v for no agent", a)
		}
		return nil
	}); err != nil {
		t.Fatalf("removing no agent: %v", err)
	}
}

// AgentsChecked lists what Agents lists, in its order, and on sound
// records names nothing unreadable.
func testAgentsChecked(t *testing.T, st state.State) {
	for i, name := range []string{"oak_0002", "ash_0001", "elm_0003"} {
		if _, err := st.CreateAgent(&state.Agent{Name: name, Status: state.AgentPending, CreatedAt: at(3 - i)}); err != nil {
			t.Fatal(err)
		}
	}
	agents, bad, err := st.AgentsChecked()
	if err != nil || len(bad) != 0 {
		t.Fatalf("AgentsChecked: %v unreadable, %v", bad, err)
	}
	var got []string
	for _, a := range agents {
		got = append(got, a.Name)
	}
	if want := []string{"elm_0003", "ash_0001", "oak_0002"}; !slices.Equal(got, want) {
		t.Fatalf("AgentsChecked lists %v, want %v (oldest first)", got, want)
	}
}

type entry struct {
	N int `json:"n"`
}

func readAll(t *testing.T, st state.State, name string, from int64) (got []int, nexts []int64, end int64) {
	t.Helper()
	end, err := st.ReadMailbox(name, from, func(raw json.RawMessage, next int64) error {
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return err
		}
		got, nexts = append(got, e.N), append(nexts, next)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, nexts, end
}

func testMailbox(t *testing.T, st state.State) {
	const name = "oak_0001"
	for _, bad := range []string{"../oak_0001", "", "a/b"} {
		wantErr(t, "post to "+bad, st.Post(bad, entry{1}), state.ErrInvalid, errs.Usage)
		_, err := st.ReadMailbox(bad, 0, func(json.RawMessage, int64) error { return nil })
		wantErr(t, "read of "+bad, err, state.ErrInvalid, errs.Usage)
		wantErr(t, "cursor of "+bad, st.SetMailboxCursor(bad, 1), state.ErrInvalid, errs.Usage)
		wantErr(t, "removal of "+bad, st.RemoveAgent(bad, func(*state.Agent) error { return nil }), state.ErrInvalid, errs.Usage)
	}
	if got, _, end := readAll(t, st, name, 0); len(got) != 0 || end != 0 {
		t.Fatalf("a missing mailbox reads %v, end %d", got, end)
	}
	if c, err := st.MailboxCursor(name); err != nil || c != 0 {
		t.Fatalf("no cursor: %d, %v", c, err)
	}
	for i := 1; i <= 3; i++ {
		if err := st.Post(name, entry{i}); err != nil {
			t.Fatal(err)
		}
	}
	got, nexts, end := readAll(t, st, name, 0)
	if !slices.Equal(got, []int{1, 2, 3}) || end != nexts[2] {
		t.Fatalf("read %v (nexts %v, end %d)", got, nexts, end)
	}
	if !(0 < nexts[0] && nexts[0] < nexts[1] && nexts[1] < nexts[2]) {
		t.Fatalf("positions %v do not increase", nexts)
	}
	if rest, _, _ := readAll(t, st, name, nexts[0]); !slices.Equal(rest, []int{2, 3}) {
		t.Fatalf("from the first entry's next: %v", rest)
	}
	if none, _, e := readAll(t, st, name, end); len(none) != 0 || e != end {
		t.Fatalf("from the end: %v, %d", none, e)
	}
	if err := st.SetMailboxCursor(name, nexts[1]); err != nil {
		t.Fatal(err)
	}
	if c, err := st.MailboxCursor(name); err != nil || c != nexts[1] {
		t.Fatalf("cursor %d, %v; want %d", c, err, nexts[1])
	}
	if err := st.Post(name, entry{4}); err != nil {
		t.Fatal(err)
	}
	if rest, _, _ := readAll(t, st, name, end); !slices.Equal(rest, []int{4}) {
		t.Fatalf("after a new post, from the old end: %v", rest)
	}
	// fn's error stops the read.
	stop := errors.New("stop")
	calls := 0
	if _, err := st.ReadMailbox(name, 0, func(json.RawMessage, int64) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("fn's error: %v after %d calls", err, calls)
	}
}

func testRequests(t *testing.T, st state.State) {
	_, err := st.Request("rq-000000")
	wantErr(t, "unknown request", err, state.ErrNotFound, errs.NotFound)
	_, err = st.Request("nope")
	wantErr(t, "malformed request id", err, state.ErrInvalid, errs.Usage)
	var made []string
	for i := 2; i >= 1; i-- {
		r := &state.Request{From: "oak_0001", Question: fmt.Sprintf("q%d", i), Status: state.RequestPending, CreatedAt: at(i)}
		if err := st.CreateRequest(r); err != nil || ids.Parse(ids.Request, r.ID) != nil {
			t.Fatalf("create: id %q, %v", r.ID, err)
		}
		made = append(made, r.ID)
	}
	if made[0] == made[1] {
		t.Fatalf("two requests got id %s", made[0])
	}
	all, err := st.Requests()
	if err != nil || len(all) != 2 || all[0].ID != made[1] || all[1].ID != made[0] {
		t.Fatalf("requests %v, %v: want oldest first", all, err)
	}
	r, err := st.UpdateRequest(made[0], func(r *state.Request) error { r.Status, r.Answer = state.RequestAnswered, "yes"; return nil })
	if err != nil || r.Answer != "yes" {
		t.Fatalf("update: %+v, %v", r, err)
	}
	if r, _ := st.Request(made[0]); r.Status != state.RequestAnswered || r.Question != "q2" {
		t.Fatalf("read after update: %+v", r)
	}
}

func testDesigns(t *testing.T, st state.State) {
	type doc struct {
		Pass int `json:"pass"`
	}
	var d doc
	err := st.ReadDesign("ds-000000", &d)
	wantErr(t, "unknown design", err, state.ErrNotFound, errs.NotFound)
	a, err := st.CreateDesign()
	if err != nil || ids.Parse(ids.Design, a) != nil {
		t.Fatalf("create: %q, %v", a, err)
	}
	b, err := st.CreateDesign()
	if err != nil || a == b {
		t.Fatalf("second design %q (first %q), %v", b, a, err)
	}
	if err := st.WriteDesign(a, doc{3}); err != nil {
		t.Fatal(err)
	}
	if err := st.ReadDesign(a, &d); err != nil || d.Pass != 3 {
		t.Fatalf("read back %+v, %v", d, err)
	}
	if err := st.AppendDesignLog(a, doc{1}); err != nil {
		t.Fatal(err)
	}
	list, err := st.DesignIDs()
	if err != nil || !slices.Equal(list, slices.Sorted(slices.Values([]string{a, b}))) {
		t.Fatalf("design ids %v, %v", list, err)
	}
}

// A seen mark starts at 0, moves forward only, is kept per agent and
// phase, and goes with its agent.
func testSeenMarks(t *testing.T, st state.State) {
	if _, err := st.CreateAgent(&state.Agent{Name: "elm_0001", Status: state.AgentRunning, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	if n := st.Seen("elm_0001", "ph-000001"); n != 0 {
		t.Fatalf("a fresh agent has seen %d", n)
	}
	st.MarkSeen("elm_0001", "ph-000001", 3)
	st.MarkSeen("elm_0001", "ph-000001", 2) // never back
	st.MarkSeen("elm_0001", "ph-000002", 1)
	for _, c := range []struct {
		agent, phase string
		want         int
	}{{"elm_0001", "ph-000001", 3}, {"elm_0001", "ph-000002", 1}, {"oak_0002", "ph-000001", 0}, {"../x", "ph-000001", 0}} {
		if n := st.Seen(c.agent, c.phase); n != c.want {
			t.Errorf("Seen(%s, %s) = %d, want %d", c.agent, c.phase, n, c.want)
		}
	}
	st.MarkSeen("../x", "ph-000001", 5) // a bad name marks nothing
	if n := st.Seen("../x", "ph-000001"); n != 0 {
		t.Errorf("a bad name holds a mark of %d", n)
	}
	if err := st.RemoveAgent("elm_0001", func(*state.Agent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := st.Seen("elm_0001", "ph-000001"); n != 0 {
		t.Errorf("a removed agent's mark is still %d", n)
	}
}

// promptFiles reads sub's prompt files: where each is kept, and its text.
func promptFiles(t *testing.T, st state.State, sub string) (wheres []string, texts []string) {
	t.Helper()
	err := st.PromptFiles(sub, func(where string, data []byte) error {
		wheres, texts = append(wheres, where), append(texts, string(data))
		return nil
	})
	if err != nil {
		t.Fatalf("PromptFiles(%q): %v", sub, err)
	}
	return wheres, texts
}

// Of creators racing for one name exactly one keeps its text; the objects
// read back in name order, named where CreatePrompt said; a removed one is
// gone; a bad name or sub is refused.
func testPromptsCreateOnce(t *testing.T, st state.State) {
	if w, _ := promptFiles(t, st, ""); len(w) != 0 {
		t.Fatalf("a new project keeps prompt files %v", w)
	}
	const racers = 8
	var wins atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("---\nname: zeta\n---\n\n%d\n", i)
			_, err := st.CreatePrompt("zeta", []byte(text))
			switch {
			case err == nil:
				wins.Add(1)
				winner.Store(text)
			case !errors.Is(err, state.ErrConflict):
				t.Errorf("racer %d: %v, want ErrConflict", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d creators of one name won, want 1", wins.Load())
	}
	whereA, err := st.CreatePrompt("alpha", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	wheres, texts := promptFiles(t, st, "")
	if len(wheres) != 2 || wheres[0] != whereA || texts[0] != "a" || texts[1] != winner.Load() {
		t.Fatalf("read back %q %q; want alpha (at %s) then the winning zeta", wheres, texts, whereA)
	}
	_, err = st.CreatePrompt("zeta", []byte("again"))
	wantErr(t, "create an existing object", err, state.ErrConflict, errs.Failure)
	if err := st.RemovePrompt("alpha"); err != nil {
		t.Fatal(err)
	}
	if w, _ := promptFiles(t, st, ""); len(w) != 1 {
		t.Fatalf("after removing alpha: %v", w)
	}
	wantErr(t, "remove a missing object", st.RemovePrompt("alpha"), state.ErrNotFound, errs.NotFound)
	_, err = st.CreatePrompt("../x", []byte("x"))
	wantErr(t, "bad name", err, state.ErrInvalid, errs.Usage)
	wantErr(t, "bad sub", st.PromptFiles("../x", func(string, []byte) error { return nil }), state.ErrInvalid, errs.Usage)
	if w, _ := promptFiles(t, st, "tools"); len(w) != 0 {
		t.Fatalf("tools holds %v, nothing was put there", w)
	}
}

// watchUntil starts a Watch whose check reports cond, and returns its result.
func watchUntil(st state.State, scope state.Scope, cond func() bool) (started <-chan struct{}, done <-chan error) {
	s, d := make(chan struct{}), make(chan error, 1)
	var once sync.Once
	go func() {
		d <- st.Watch(context.Background(), scope, func() (bool, error) {
			ok := cond()
			once.Do(func() { close(s) })
			return ok, nil
		})
	}()
	return s, d
}

// Each watch is started, its first check seen, and only then the change
// made: the wake-up must come from the change (no sleep, no deadline: a
// watch that never wakes hangs the test until go test's timeout).
func testWatchTask(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	started, done := watchUntil(st, state.Scope{Task: tk.ID}, func() bool {
		x, err := st.Task(tk.ID)
		return err == nil && x.Status == state.TaskDone
	})
	<-started
	if _, err := st.UpdateTask(tk.ID, func(x *state.Task) error { x.Status = state.TaskDone; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A task's scope covers its rooms: a message and a close wake it.
func testWatchTaskRoom(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ph := newPhase(t, st, tk, 10)
	started, done := watchUntil(st, state.Scope{Task: tk.ID}, func() bool {
		ms, err := st.Messages(tk.ID, ph.ID)
		return err == nil && len(ms) == 1
	})
	<-started
	if err := st.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error { return tx.Append(message(ph.ID, 1)) }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	started, done = watchUntil(st, state.Scope{Task: tk.ID}, func() bool {
		p, err := st.Phase(tk.ID, ph.ID)
		return err == nil && p.Status == state.PhaseClosed
	})
	<-started
	if _, err := st.UpdatePhase(tk.ID, ph.ID, func(p *state.Phase) { p.Status, p.CloseReason = state.PhaseClosed, state.CloseEnded }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A phase opened after the watch began is covered too.
	started, done = watchUntil(st, state.Scope{Task: tk.ID}, func() bool {
		ps, _ := st.Phases(tk.ID)
		if len(ps) < 2 {
			return false
		}
		ms, _ := st.Messages(tk.ID, ps[1].ID)
		return len(ms) == 1
	})
	<-started
	second := newPhase(t, st, tk, 10)
	if err := st.WithPhase(tk.ID, second.ID, func(tx state.RoomTx) error { return tx.Append(message(second.ID, 2)) }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func testWatchAgent(t *testing.T, st state.State) {
	const name = "oak_0001"
	started, done := watchUntil(st, state.Scope{Agent: name}, func() bool {
		end, _ := st.ReadMailbox(name, 0, func(json.RawMessage, int64) error { return nil })
		return end > 0
	})
	<-started
	if err := st.Post(name, entry{1}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func testWatchRequests(t *testing.T, st state.State) {
	started, done := watchUntil(st, state.Scope{Requests: true}, func() bool {
		all, _ := st.Requests()
		return len(all) == 1
	})
	<-started
	if err := st.CreateRequest(&state.Request{From: "oak_0001", Question: "?", Status: state.RequestPending, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func testWatchContextEnds(t *testing.T, st state.State) {
	tk := newTask(t, st, 1, nil)
	ctx, cancel := context.WithCancel(context.Background())
	checks := 0
	err := st.Watch(ctx, state.Scope{Task: tk.ID}, func() (bool, error) {
		checks++
		cancel() // the context ends after the first check: Watch returns its error
		return false, nil
	})
	if !errors.Is(err, context.Canceled) || checks < 1 {
		t.Fatalf("watch after cancel: %v after %d checks", err, checks)
	}
	boom := errors.New("boom")
	if err := st.Watch(context.Background(), state.Scope{Task: tk.ID}, func() (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("check's error: %v", err)
	}
}
