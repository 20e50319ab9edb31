package phase_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	s := storetest.New(t)
	return s
}

func addTask(t *testing.T, s *store.Store, id string, status store.TaskStatus) {
	t.Helper()
	if err := s.WriteTask(&store.Task{ID: id, Description: "d " + id, Owner: "oak_0001", Status: status, BlockedBy: []string{}, Runtime: "none", CreatedAt: s.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
}

func phaseCount(t *testing.T, s *store.Store, taskID string) int {
	t.Helper()
	ps, err := s.Phases(taskID)
	if err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

func TestCreate(t *testing.T) {
	const tk = "tk-000001"
	tests := []struct {
		name  string
		setup func(t *testing.T, s *store.Store)
		spec  phase.Spec
		code  errs.Code
	}{
		{name: "ok", spec: phase.Spec{Name: "Design", Limit: 10, Roles: []string{"designer", "developer"}, Rules: "be brief"}},
		{name: "no roles is fine", spec: phase.Spec{Name: "Solo", Limit: 1}},
		{name: "limit at messages_per_phase", spec: phase.Spec{Name: "Max", Limit: 50}},
		{name: "three roles", spec: phase.Spec{Name: "D", Limit: 3, Roles: []string{"a", "b", "c"}}},
		{name: "empty name", spec: phase.Spec{Name: "  ", Limit: 3}, code: errs.Usage},
		{name: "limit zero", spec: phase.Spec{Name: "D", Limit: 0}, code: errs.Usage},
		{name: "negative limit", spec: phase.Spec{Name: "D", Limit: -4}, code: errs.Usage},
		{name: "limit over messages_per_phase", spec: phase.Spec{Name: "D", Limit: 51}, code: errs.Limit},
		{name: "too many roles", spec: phase.Spec{Name: "D", Limit: 3, Roles: []string{"a", "b", "c", "d"}}, code: errs.Limit},
		{name: "bad role name", spec: phase.Spec{Name: "D", Limit: 3, Roles: []string{"../owner"}}, code: errs.Usage},
		{name: "empty role", spec: phase.Spec{Name: "D", Limit: 3, Roles: []string{""}}, code: errs.Usage},
		{name: "duplicate role", spec: phase.Spec{Name: "D", Limit: 3, Roles: []string{"qa", "qa"}}, code: errs.Usage},
		{name: "name at its bound", spec: phase.Spec{Name: strings.Repeat("n", phase.MaxName), Limit: 3}},
		{name: "name over its bound", spec: phase.Spec{Name: strings.Repeat("n", phase.MaxName+1), Limit: 3}, code: errs.Usage},
		{name: "name not UTF-8", spec: phase.Spec{Name: "D\xff", Limit: 3}, code: errs.Usage},
		{name: "rules over 16 KiB", spec: phase.Spec{Name: "D", Limit: 3, Rules: strings.Repeat("r", phase.MaxMessage+1)}, code: errs.Usage},
		{name: "limit max int", spec: phase.Spec{Name: "D", Limit: math.MaxInt}, code: errs.Limit},
		{name: "limit min int", spec: phase.Spec{Name: "D", Limit: math.MinInt}, code: errs.Usage},
		{
			name:  "second active phase",
			setup: func(t *testing.T, s *store.Store) { mustCreate(t, s, tk, 3) },
			spec:  phase.Spec{Name: "Again", Limit: 3}, code: errs.State,
		},
		{
			name: "after the first closed",
			setup: func(t *testing.T, s *store.Store) {
				ph := mustCreate(t, s, tk, 3)
				if _, err := phase.Close(s, fsstate.New(s), store.Human, tk, ph.ID, store.CloseEnded); err != nil {
					t.Fatal(err)
				}
			},
			spec: phase.Spec{Name: "Again", Limit: 3},
		},
		{
			name: "phases_per_task reached",
			setup: func(t *testing.T, s *store.Store) {
				s.Config().Limits.PhasesPerTask = 2
				for range 2 {
					ph := mustCreate(t, s, tk, 3)
					if _, err := phase.Close(s, fsstate.New(s), store.Human, tk, ph.ID, store.CloseEnded); err != nil {
						t.Fatal(err)
					}
				}
			},
			spec: phase.Spec{Name: "Third", Limit: 3}, code: errs.Limit,
		},
		{
			name:  "task not active",
			setup: func(t *testing.T, s *store.Store) { addTask(t, s, tk, store.TaskBlocked) },
			spec:  phase.Spec{Name: "D", Limit: 3}, code: errs.State,
		},
		{
			name:  "task done",
			setup: func(t *testing.T, s *store.Store) { addTask(t, s, tk, store.TaskDone) },
			spec:  phase.Spec{Name: "D", Limit: 3}, code: errs.State,
		},
		{name: "unknown task", spec: phase.Spec{TaskID: "tk-999999", Name: "D", Limit: 3}, code: errs.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			addTask(t, s, tk, store.TaskActive)
			if tt.setup != nil {
				tt.setup(t, s)
			}
			if tt.spec.TaskID == "" {
				tt.spec.TaskID = tk
			}
			before := phaseCount(t, s, tk)
			ph, err := phase.Create(s, fsstate.New(s), store.Human, tt.spec)
			if tt.code != 0 {
				if errs.CodeOf(err) != tt.code {
					t.Fatalf("Create = %+v, %v; want exit %d", ph, err, tt.code)
				}
				if errs.TryOf(err) == "" {
					t.Errorf("error %q has no Try hint", err)
				}
				if n := phaseCount(t, s, tk); n != before {
					t.Fatalf("refused Create changed the phases: %d -> %d", before, n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			got, err := s.Phase(tk, ph.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != store.PhaseActive || got.Name != tt.spec.Name || got.MessageLimit != tt.spec.Limit ||
				got.TaskID != tk || got.Rules != tt.spec.Rules || fmt.Sprint(got.Roles) != fmt.Sprint(tt.spec.Roles) {
				t.Fatalf("recorded phase %+v does not match %+v", got, tt.spec)
			}
			if n, err := jsonl.Count(s.MessagesPath(tk, ph.ID)); err != nil || n != 0 {
				t.Fatalf("new phase has %d messages, %v", n, err)
			}
			if _, err := os.Stat(s.MessagesPath(tk, ph.ID)); err != nil {
				t.Fatalf("messages.jsonl not created: %v", err)
			}
			if active, _ := s.ActivePhase(tk); active == nil || active.ID != ph.ID {
				t.Fatalf("ActivePhase = %+v, want %s", active, ph.ID)
			}
		})
	}
}

func mustCreate(t *testing.T, s *store.Store, taskID string, limit int) *store.Phase {
	t.Helper()
	ph, err := phase.Create(s, fsstate.New(s), store.Human, phase.Spec{TaskID: taskID, Name: "P", Limit: limit, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

// Many owners opening a phase at once: exactly one wins.
func TestCreateRace(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[errs.Code]int{}
	for range 12 {
		wg.Go(func() {
			_, err := phase.Create(s, fsstate.New(s), store.Human, phase.Spec{TaskID: "tk-000001", Name: "P", Limit: 3})
			mu.Lock()
			codes[errs.CodeOf(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[errs.OK] != 1 || codes[errs.State] != 11 {
		t.Fatalf("outcomes %v, want 1 ok and 11 exit 5", codes)
	}
	if n := phaseCount(t, s, "tk-000001"); n != 1 {
		t.Fatalf("%d phases recorded", n)
	}
}

func checkClosedAtLimit(t *testing.T, s *store.Store, taskID, phaseID string, limit int) {
	t.Helper()
	var bad []jsonl.BadLine
	ms, err := jsonl.ReadAll[store.Message](s.MessagesPath(taskID, phaseID), func(b jsonl.BadLine) { bad = append(bad, b) })
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != limit || len(bad) != 0 {
		t.Fatalf("messages.jsonl holds %d valid lines and %d bad, want exactly %d valid", len(ms), len(bad), limit)
	}
	data, _ := os.ReadFile(s.MessagesPath(taskID, phaseID))
	if lines := strings.Count(string(data), "\n"); lines != limit {
		t.Fatalf("messages.jsonl has %d lines, want %d", lines, limit)
	}
	ids := map[string]bool{}
	for _, m := range ms {
		if ids[m.ID] || m.PhaseID != phaseID {
			t.Fatalf("message %+v duplicated or in the wrong phase", m)
		}
		ids[m.ID] = true
	}
	ph, err := s.Phase(taskID, phaseID)
	if err != nil {
		t.Fatal(err)
	}
	if ph.Status != store.PhaseClosed || ph.CloseReason != store.CloseLimit || ph.ClosedAt == nil {
		t.Fatalf("phase.json = %+v, want closed with reason %q", ph, store.CloseLimit)
	}
	// The bus recorded exactly one close.
	evs, err := jsonl.ReadAll[bus.Event](s.EventsPath(), nil)
	if err != nil {
		t.Fatal(err)
	}
	closes, posts := 0, 0
	for _, e := range evs {
		if e.PhaseID != phaseID {
			continue
		}
		switch e.Kind {
		case bus.EvPhaseClosed:
			closes++
		case bus.EvMessage:
			posts++
		}
	}
	if closes != 1 || posts != limit {
		t.Fatalf("bus has %d phase.closed and %d message.posted events, want 1 and %d", closes, posts, limit)
	}
}

func TestSayExactlyLimit(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 3)
	for i := 1; i <= 3; i++ {
		m, closed, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, fmt.Sprintf("message %d", i))
		if err != nil {
			t.Fatalf("say %d: %v", i, err)
		}
		if closed != (i == 3) {
			t.Fatalf("say %d: closed = %v", i, closed)
		}
		if m.Author != "human" || m.Content != fmt.Sprintf("message %d", i) || m.ID == "" {
			t.Fatalf("say %d returned %+v", i, m)
		}
	}
	_, closed, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, "one more")
	if !errs.Is(err, errs.State) || closed {
		t.Fatalf("say past the limit = closed %v, %v; want exit 5", closed, err)
	}
	checkClosedAtLimit(t, s, "tk-000001", ph.ID, 3)
}

func TestSayRace(t *testing.T) {
	const limit, writers = 5, 16
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", limit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, closedBy, state := 0, 0, 0
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			actor := store.Actor{Name: fmt.Sprintf("w%02d", w), Agent: &store.Agent{Name: fmt.Sprintf("w%02d", w), Role: "qa"}}
			_, closed, err := phase.Say(s, fsstate.New(s), actor, "tk-000001", ph.ID, "hello from "+actor.Name)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
				if closed {
					closedBy++
				}
			case errs.Is(err, errs.State):
				state++
			default:
				t.Errorf("writer %d: %v", w, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok != limit || state != writers-limit || closedBy != 1 {
		t.Fatalf("%d succeeded (%d saw the close), %d got exit 5; want %d, 1, %d", ok, closedBy, state, limit, writers-limit)
	}
	checkClosedAtLimit(t, s, "tk-000001", ph.ID, limit)
	ms, _ := s.Messages("tk-000001", ph.ID)
	for _, m := range ms {
		if m.Role != "qa" || !strings.HasPrefix(m.Author, "w") {
			t.Fatalf("message %+v lost its author or role", m)
		}
	}
}

const helperEnv = "PM_PHASE_TEST_HELPER"

// TestHelperProcess is not a test: it is a writer process of
// TestSayRaceProcesses. It posts once and exits 0 (posted), 5 (closed) or 1.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process")
	}
	s, err := store.Open(os.Getenv("PM_HOME"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, _, err = phase.Say(s, fsstate.New(s), store.Actor{Name: os.Getenv("PM_AGENT")}, os.Getenv("PM_TASK"), os.Getenv("PM_PHASE"), "hi")
	if err != nil && !errs.Is(err, errs.State) {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(int(errs.CodeOf(err)))
}

func TestSayRaceProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const limit, writers = 4, 10
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", limit)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // hang guard
	defer cancel()
	var cmds []*exec.Cmd
	for w := range writers {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"=1", "PM_HOME="+s.Root, "PM_AGENT=p"+strconv.Itoa(w),
			"PM_TASK=tk-000001", "PM_PHASE="+ph.ID)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	codes := map[int]int{}
	for _, c := range cmds {
		_ = c.Wait()
		codes[c.ProcessState.ExitCode()]++
	}
	if codes[0] != limit || codes[int(errs.State)] != writers-limit {
		t.Fatalf("exit codes %v, want %d×0 and %d×5", codes, limit, writers-limit)
	}
	checkClosedAtLimit(t, s, "tk-000001", ph.ID, limit)
}

func TestSayRefusals(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 5)
	tests := []struct {
		name     string
		task, ph string
		content  string
		code     errs.Code
	}{
		{"empty", "", "", "", errs.Usage},
		{"blank", "", "", " \n\t", errs.Usage},
		{"too long", "", "", strings.Repeat("x", phase.MaxMessage+1), errs.Usage},
		{"not utf-8", "", "", "bad \xff byte", errs.Usage},
		{"unknown phase", "", "ph-999999", "hi", errs.NotFound},
		{"bad phase id", "", "ph-../x", "hi", errs.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, pid := "tk-000001", ph.ID
			if tt.task != "" {
				task = tt.task
			}
			if tt.ph != "" {
				pid = tt.ph
			}
			_, _, err := phase.Say(s, fsstate.New(s), store.Human, task, pid, tt.content)
			if errs.CodeOf(err) != tt.code {
				t.Fatalf("Say = %v, want exit %d", err, tt.code)
			}
		})
	}
	if n, _ := jsonl.Count(s.MessagesPath("tk-000001", ph.ID)); n != 0 {
		t.Fatalf("refused says wrote %d messages", n)
	}
	// The largest message allowed goes through.
	if _, _, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, strings.Repeat("é", phase.MaxMessage/2)); err != nil {
		t.Fatalf("Say of exactly MaxMessage bytes: %v", err)
	}
}

// A crash between the last append and the close leaves phase.json active with
// a full log: the next Say finishes the close instead of posting.
func TestSayFinishesInterruptedClose(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 2)
	for i := range 2 {
		if err := jsonl.Append(s.MessagesPath("tk-000001", ph.ID), store.Message{ID: fmt.Sprintf("msg-00000%d", i), PhaseID: ph.ID, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, "third")
	if !errs.Is(err, errs.State) {
		t.Fatalf("Say = %v, want exit 5", err)
	}
	got, _ := s.Phase("tk-000001", ph.ID)
	if got.Status != store.PhaseClosed || got.CloseReason != store.CloseLimit {
		t.Fatalf("phase = %+v, want closed by limit", got)
	}
	if n, _ := jsonl.Count(s.MessagesPath("tk-000001", ph.ID)); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
}

func TestExtend(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		by      int
		closed  bool
		code    errs.Code
		wantLim int
	}{
		{name: "within", limit: 10, by: 5, wantLim: 15},
		{name: "up to messages_per_phase", limit: 10, by: 40, wantLim: 50},
		{name: "one over", limit: 10, by: 41, code: errs.Limit},
		{name: "zero", limit: 10, by: 0, code: errs.Usage},
		{name: "negative", limit: 10, by: -3, code: errs.Usage},
		{name: "max int does not wrap", limit: 10, by: math.MaxInt, code: errs.Limit},
		{name: "max int minus limit does not wrap", limit: 10, by: math.MaxInt - 9, code: errs.Limit},
		{name: "closed phase", limit: 10, by: 1, closed: true, code: errs.State},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			addTask(t, s, "tk-000001", store.TaskActive)
			ph := mustCreate(t, s, "tk-000001", tt.limit)
			if tt.closed {
				if _, err := phase.Close(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, store.CloseEnded); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(s.PhasePath("tk-000001", ph.ID))
			got, err := phase.Extend(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, tt.by)
			if tt.code != 0 {
				if errs.CodeOf(err) != tt.code {
					t.Fatalf("Extend = %+v, %v; want exit %d", got, err, tt.code)
				}
				after, _ := os.ReadFile(s.PhasePath("tk-000001", ph.ID))
				if string(before) != string(after) {
					t.Fatalf("refused Extend changed phase.json")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec, _ := s.Phase("tk-000001", ph.ID)
			if got.MessageLimit != tt.wantLim || rec.MessageLimit != tt.wantLim || rec.Status != store.PhaseActive {
				t.Fatalf("limit now %d (recorded %d, %s), want %d", got.MessageLimit, rec.MessageLimit, rec.Status, tt.wantLim)
			}
		})
	}
}

// Extensions count against messages_per_phase however they are split.
func TestExtendRepeatedStaysWithinCap(t *testing.T) {
	s := newStore(t)
	s.Config().Limits.MessagesPerPhase = 6
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 2)
	for range 2 {
		if _, err := phase.Extend(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := phase.Extend(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, 1); !errs.Is(err, errs.Limit) {
		t.Fatalf("third extension = %v, want exit 3", err)
	}
	// The extended phase takes exactly 6 messages.
	for i := range 6 {
		if _, closed, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, "m"); err != nil || closed != (i == 5) {
			t.Fatalf("say %d: closed %v, %v", i, closed, err)
		}
	}
	checkClosedAtLimit(t, s, "tk-000001", ph.ID, 6)
}

// Extending a phase at its limit is not possible: it closed on the last message.
func TestExtendAfterLimitClose(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 1)
	if _, _, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, "only"); err != nil {
		t.Fatal(err)
	}
	if _, err := phase.Extend(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, 1); !errs.Is(err, errs.State) {
		t.Fatalf("Extend of a closed phase = %v, want exit 5", err)
	}
}

func TestClose(t *testing.T) {
	s := newStore(t)
	fixed := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Now = func() time.Time { return fixed }
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 5)
	if _, _, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, "first"); err != nil {
		t.Fatal(err)
	}
	got, err := phase.Close(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, store.CloseEnded)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.PhaseClosed || got.CloseReason != store.CloseEnded || got.ClosedAt == nil || !got.ClosedAt.Equal(fixed) {
		t.Fatalf("Close = %+v", got)
	}
	if _, err := phase.Close(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, store.CloseEnded); !errs.Is(err, errs.State) {
		t.Fatalf("second Close = %v, want exit 5", err)
	}
	if _, _, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, "late"); !errs.Is(err, errs.State) {
		t.Fatalf("Say after Close = %v, want exit 5", err)
	}
	if _, err := phase.Close(s, fsstate.New(s), store.Human, "tk-000001", "ph-999999", store.CloseEnded); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Close(unknown) = %v, want exit 4", err)
	}
	if _, err := phase.Extend(s, fsstate.New(s), store.Human, "tk-000001", "ph-999999", 1); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Extend(unknown) = %v, want exit 4", err)
	}
	if _, err := phase.Extend(s, fsstate.New(s), store.Human, "tk-000001", "ph-/../../x", 1); !errs.Is(err, errs.Usage) {
		t.Fatalf("Extend(bad id) = %v, want exit 2", err)
	}
	if _, err := os.Stat(filepath.Join(s.PhasesDir("tk-000001"), "ph-999999")); !os.IsNotExist(err) {
		t.Fatalf("refused calls left files for an unknown phase")
	}
	if n, _ := jsonl.Count(s.MessagesPath("tk-000001", ph.ID)); n != 1 {
		t.Fatalf("%d messages after close, want 1", n)
	}
	if active, _ := s.ActivePhase("tk-000001"); active != nil {
		t.Fatalf("ActivePhase after close = %+v", active)
	}
}

func TestSetAgents(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 5)
	if err := phase.SetAgents(s, fsstate.New(s), "tk-000001", ph.ID, []string{"oak_0001"}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Phase("tk-000001", ph.ID)
	if fmt.Sprint(got.Agents) != "[oak_0001]" || got.Status != store.PhaseActive {
		t.Fatalf("phase = %+v", got)
	}
	if err := phase.SetAgents(s, fsstate.New(s), "tk-000001", "ph-999999", nil); err == nil {
		t.Fatal("SetAgents on a missing phase succeeded")
	}
	if _, err := os.Stat(filepath.Join(s.PhasesDir("tk-000001"), "ph-999999")); !os.IsNotExist(err) {
		t.Fatal("SetAgents created a phase")
	}
}

// A hand-edited phase.json with an absurd limit is refused, never wrapped.
func TestExtendBadRecordedLimit(t *testing.T) {
	for _, lim := range []int{-1, math.MinInt, 51, math.MaxInt} {
		s := newStore(t)
		addTask(t, s, "tk-000001", store.TaskActive)
		ph := mustCreate(t, s, "tk-000001", 5)
		if _, err := lockedfileSetLimit(s, ph, lim); err != nil {
			t.Fatal(err)
		}
		want := errs.Limit
		if lim <= 0 {
			// A room whose limit its log already reaches is closed
			// (store.RoomClosedBy): refused as closed, not extended.
			want = errs.State
		}
		if _, err := phase.Extend(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, 1); errs.CodeOf(err) != want {
			t.Fatalf("recorded limit %d: Extend = %v; want exit %d", lim, err, want)
		}
		if got, _ := s.FindPhase(ph.ID); got.MessageLimit != lim {
			t.Fatalf("recorded limit %d became %d", lim, got.MessageLimit)
		}
	}
}

func lockedfileSetLimit(s *store.Store, ph *store.Phase, lim int) (*store.Phase, error) {
	ph.MessageLimit = lim
	b, err := json.Marshal(ph)
	if err != nil {
		return nil, err
	}
	return ph, os.WriteFile(s.PhasePath(ph.TaskID, ph.ID), b, 0o644)
}

// A torn tail that is a whole record minus its newline (a say that failed on
// ENOSPC, or was killed at a page boundary) was never acknowledged: the next
// say must not revive it, so the count stays right and the room closes at
// exactly its limit (issue 8 item 9).
func TestSayNeverRevivesTornWholeRecord(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-000001", store.TaskActive)
	ph := mustCreate(t, s, "tk-000001", 2)
	torn, err := json.Marshal(store.Message{ID: "msg-torn01", PhaseID: ph.ID, Author: "human", Content: "failed say"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.MessagesPath("tk-000001", ph.ID), torn, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		_, closed, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, fmt.Sprintf("message %d", i))
		if err != nil {
			t.Fatalf("say %d: %v", i, err)
		}
		if closed != (i == 2) {
			t.Fatalf("say %d: closed = %v, want the room to close at exactly 2", i, closed)
		}
		if n, _ := jsonl.Count(s.MessagesPath("tk-000001", ph.ID)); n != i {
			t.Fatalf("after say %d the room counts %d messages", i, n)
		}
	}
	ms, err := jsonl.ReadAll[store.Message](s.MessagesPath("tk-000001", ph.ID), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == "msg-torn01" {
			t.Fatalf("the unacknowledged record came back: %+v", ms)
		}
	}
	if _, _, err := phase.Say(s, fsstate.New(s), store.Human, "tk-000001", ph.ID, "one more"); !errs.Is(err, errs.State) {
		t.Fatalf("say past the limit = %v, want exit 5", err)
	}
}

// A room a crash left with phase.json active but its log full (a say killed
// between its append and the close), or whose task ended meanwhile (a pm
// kill killed between its mark and closing the phases), is closed for
// every reader and writer: the state is derived from the log and the task
// (store.RoomClosedBy), and phase.json, a cache of it, is repaired where it
// is seen (issue 21 items 1 and 8).
func TestStrandedRoomIsClosedForEveryone(t *testing.T) {
	const tk = "tk-000001"
	tests := []struct {
		name   string
		strand func(t *testing.T, s *store.Store, ph *store.Phase)
		reason store.CloseReason
	}{
		{"full log", func(t *testing.T, s *store.Store, ph *store.Phase) {
			for i := range ph.MessageLimit {
				if err := jsonl.Append(s.MessagesPath(tk, ph.ID), store.Message{ID: fmt.Sprintf("msg-00000%d", i), PhaseID: ph.ID, Content: "x"}); err != nil {
					t.Fatal(err)
				}
			}
		}, store.CloseLimit},
		{"task killed", func(t *testing.T, s *store.Store, ph *store.Phase) {
			if _, err := s.UpdateTask(tk, func(x *store.Task) error { x.Status = store.TaskKilled; return nil }); err != nil {
				t.Fatal(err)
			}
		}, store.CloseKilled},
		{"task done", func(t *testing.T, s *store.Store, ph *store.Phase) {
			if _, err := s.UpdateTask(tk, func(x *store.Task) error { x.Status = store.TaskDone; return nil }); err != nil {
				t.Fatal(err)
			}
		}, store.CloseTask},
	}
	checks := []struct {
		name  string
		check func(s *store.Store, ph *store.Phase) error
	}{
		{"Phase", func(s *store.Store, ph *store.Phase) error {
			return isClosed(s.Phase(tk, ph.ID))
		}},
		{"FindPhase", func(s *store.Store, ph *store.Phase) error { return isClosed(s.FindPhase(ph.ID)) }},
		{"Phases", func(s *store.Store, ph *store.Phase) error {
			ps, err := s.Phases(tk)
			if err != nil || len(ps) != 1 {
				return fmt.Errorf("Phases = %v, %v", ps, err)
			}
			return isClosed(ps[0], nil)
		}},
		{"ActivePhase", func(s *store.Store, ph *store.Phase) error {
			if p, err := s.ActivePhase(tk); p != nil || err != nil {
				return fmt.Errorf("ActivePhase = %+v, %v; want none", p, err)
			}
			return nil
		}},
		{"Say", func(s *store.Store, ph *store.Phase) error {
			if _, _, err := phase.Say(s, fsstate.New(s), store.Human, tk, ph.ID, "one more"); !errs.Is(err, errs.State) {
				return fmt.Errorf("Say = %v, want exit 5", err)
			}
			return nil
		}},
		{"Extend", func(s *store.Store, ph *store.Phase) error {
			if _, err := phase.Extend(s, fsstate.New(s), store.Human, tk, ph.ID, 2); !errs.Is(err, errs.State) {
				return fmt.Errorf("Extend = %v, want exit 5", err)
			}
			return nil
		}},
		{"Close", func(s *store.Store, ph *store.Phase) error {
			if _, err := phase.Close(s, fsstate.New(s), store.Human, tk, ph.ID, store.CloseEnded); !errs.Is(err, errs.State) {
				return fmt.Errorf("Close = %v, want exit 5", err)
			}
			return nil
		}},
		{"WaitNew", func(s *store.Store, ph *store.Phase) error {
			// A guard, not a threshold: the old code waited here forever.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			w, err := phase.WaitNew(ctx, s, fsstate.New(s), store.Human, ph)
			if !errs.Is(err, errs.State) || w == nil || !w.Closed {
				return fmt.Errorf("WaitNew = %+v, %v; want closed, exit 5", w, err)
			}
			return nil
		}},
	}
	for _, tc := range tests {
		for _, c := range checks {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				s := newStore(t)
				addTask(t, s, tk, store.TaskActive)
				ph := mustCreate(t, s, tk, 2)
				tc.strand(t, s, ph)
				if err := c.check(s, ph); err != nil {
					t.Fatal(err)
				}
				// Whoever saw it repaired the cache: phase.json says closed,
				// with the derived reason, and the bus says so once.
				var rec store.Phase
				data, err := os.ReadFile(s.PhasePath(tk, ph.ID))
				if err != nil || json.Unmarshal(data, &rec) != nil {
					t.Fatalf("phase.json: %v", err)
				}
				if rec.Status != store.PhaseClosed || rec.CloseReason != tc.reason {
					t.Fatalf("phase.json = %s %s, want closed %s", rec.Status, rec.CloseReason, tc.reason)
				}
				if n := countEvents(t, s, bus.EvPhaseClosed); n != 1 {
					t.Fatalf("%d phase.closed events, want 1", n)
				}
			})
		}
	}
}

func isClosed(p *store.Phase, err error) error {
	if err != nil {
		return err
	}
	if p.Status != store.PhaseClosed || p.CloseReason == "" {
		return fmt.Errorf("phase = %s (%s), want closed", p.Status, p.CloseReason)
	}
	return nil
}

func countEvents(t *testing.T, s *store.Store, kind bus.Kind) int {
	t.Helper()
	ds, _, err := s.Bus().Tail(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range ds {
		if d.Event.Kind == kind {
			n++
		}
	}
	return n
}

// Lines of a room that are JSON but no message (a corrupted or hand-written
// line) are not messages for anyone: every reader counts and hands on what
// the say's count counts, so pm chat --json never shows a room "4/3" that
// pm say still posts into (issue 21 item 8).
func TestEveryReaderCountsWhatSayCounts(t *testing.T) {
	const tk = "tk-000001"
	s := newStore(t)
	addTask(t, s, tk, store.TaskActive)
	ph := mustCreate(t, s, tk, 3)
	for _, c := range []string{"one", "two"} {
		if _, _, err := phase.Say(s, fsstate.New(s), store.Human, tk, ph.ID, c); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(s.MessagesPath(tk, ph.ID), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"x":1}` + "\n" + `{"id":"","content":"no id"}` + "\n" + "42\n" + `{"id":"msg-torn","conte` + "\n")
	f.Close()
	want, err := s.MessageCount(tk, ph.ID)
	if err != nil || want != 2 {
		t.Fatalf("MessageCount = %d, %v; want 2", want, err)
	}
	readers := []struct {
		name string
		read func() (int, error)
	}{
		{"Read", func() (int, error) {
			got := 0
			_, n, err := phase.Read(s, fsstate.New(s), store.Human, ph.ID, func([]byte, *store.Message) error { got++; return nil })
			return cmpCount(n, got, err)
		}},
		{"ReadViews raw", func() (int, error) {
			got := 0
			_, n, err := phase.ReadViews(s, fsstate.New(s), store.Human, ph.ID, nil, func([]byte) error { got++; return nil })
			return cmpCount(n, got, err)
		}},
		{"ReadViews decoded", func() (int, error) {
			got := 0
			_, n, err := phase.ReadViews(s, fsstate.New(s), store.Human, ph.ID, new(store.MessageView), func([]byte) error { got++; return nil })
			return cmpCount(n, got, err)
		}},
		{"Messages", func() (int, error) { m, err := s.Messages(tk, ph.ID); return len(m), err }},
		{"LastMessages", func() (int, error) { _, n, err := s.LastMessages(tk, ph.ID, 10); return n, err }},
		{"FollowMessages", func() (int, error) {
			n := 0
			stop := func() (bool, error) { return true, nil }
			for _, err := range s.FollowMessages(tk, ph.ID, stop).Lines(context.Background(), bus.Cursor{}) {
				if err != nil {
					return n, err
				}
				n++
			}
			return n, nil
		}},
	}
	for _, r := range readers {
		if n, err := r.read(); err != nil || n != want {
			t.Errorf("%s: %d messages, %v; want %d", r.name, n, err, want)
		}
	}
	// The room takes exactly one more message, and is then closed.
	if _, closed, err := phase.Say(s, fsstate.New(s), store.Human, tk, ph.ID, "three"); err != nil || !closed {
		t.Fatalf("third say: closed %v, %v", closed, err)
	}
}

// cmpCount is n when the reader handed on as many lines as it counted.
func cmpCount(n, handed int, err error) (int, error) {
	if err == nil && n != handed {
		err = fmt.Errorf("counted %d, handed on %d", n, handed)
	}
	return n, err
}
