package supervisor

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
	"github.com/plasmodium/pm/internal/watch"
)

func newStore(t testing.TB) *store.Store {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeHost is the "pm" the launcher runs: it ignores `agent-run NAME` and
// sleeps, so each start is a real process the test can kill -9.
func fakeHost(t *testing.T, s *store.Store) *agent.Launcher {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "pm")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec sleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &agent.Launcher{Store: s, State: fsstate.New(s), Exe: exe}
	t.Cleanup(func() {
		as, _ := s.Agents()
		for _, a := range as {
			_, _ = driver.NewProcess(0).Stop(context.Background(), a.Handle)
		}
	})
	return l
}

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// owned creates an active task (runtime none, so nothing starts) and returns
// it with its owner's record turned into a crashed llm agent: "running", with
// a pid that is gone.
func owned(t *testing.T, s *store.Store) (*store.Task, *store.Agent) {
	t.Helper()
	tk, err := task.Create(s, &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/nonexistent"}, store.Human, task.Spec{Description: "keep me alive", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.UpdateAgent(tk.Owner, func(a *store.Agent) error {
		a.Runtime, a.Status, a.Pid, a.PidStart = "llm", store.AgentRunning, deadPid(t), 1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tk, a
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// waitEvent blocks on file events until the bus has n events of kind for
// agent (hang guard only).
func waitEvent(t *testing.T, s *store.Store, kind bus.Kind, name string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := watch.Until(ctx, func() []string { return []string{s.Root} }, func() (bool, error) {
		evs, err := jsonl.ReadAll[bus.Event](s.EventsPath(), nil)
		if err != nil {
			return false, err
		}
		c := 0
		for _, ev := range evs {
			if ev.Kind == kind && ev.Agent == name {
				c++
			}
		}
		return c >= n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d %s of %s: %v", n, kind, name, err)
	}
}

func TestWantedAndCrashed(t *testing.T) {
	s := newStore(t)
	tk, owner := owned(t, s)
	ph, err := phase.Create(s, fsstate.New(s), store.Actor{Name: owner.Name, Agent: owner}, phase.Spec{TaskID: tk.ID, Name: "Design", Limit: 4, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := task.Create(s, &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/nonexistent"}, store.Human, task.Spec{Description: "finished", Runtime: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateTask(done.ID, func(t *store.Task) error { t.Status = store.TaskDone; return nil }); err != nil {
		t.Fatal(err)
	}
	closed, err := phase.Create(s, fsstate.New(s), store.Human, phase.Spec{TaskID: done.ID, Name: "Old", Limit: 4})
	if err == nil {
		t.Fatalf("a phase on a done task: %+v", closed)
	}
	sv := &Supervisor{Store: s, State: fsstate.New(s)}
	zero, one := 0, 1
	for _, c := range []struct {
		name    string
		a       store.Agent
		want    bool
		crashed bool
	}{
		{"owner of an active task, killed -9", store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "llm", Status: store.AgentRunning}, true, true},
		{"owner that exited 0 (stalled: waits for a person, not a respawn)", store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "llm", Status: store.AgentExited, ExitCode: &zero}, false, false},
		{"owner that exited 1", store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "llm", Status: store.AgentExited, ExitCode: &one}, true, true},
		{"a former owner", store.Agent{Name: "old_0001", TaskID: tk.ID, Runtime: "llm", Status: store.AgentRunning}, false, true},
		{"owner of a done task", store.Agent{Name: done.Owner, TaskID: done.ID, Runtime: "llm", Status: store.AgentRunning}, false, true},
		{"runtime none", store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "none", Status: store.AgentRunning}, false, true},
		{"killed", store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "llm", Status: store.AgentKilled}, false, false},
		{"failed", store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "llm", Status: store.AgentFailed}, false, false},
		{"pending", store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "llm", Status: store.AgentPending}, false, false},
		{"role agent, phase active", store.Agent{Name: "oak_0001", TaskID: tk.ID, PhaseID: ph.ID, Role: "designer", Runtime: "llm", Status: store.AgentRunning}, true, true},
		{"role agent, no such phase", store.Agent{Name: "oak_0001", TaskID: tk.ID, PhaseID: "ph-ffffff", Role: "designer", Runtime: "llm", Status: store.AgentRunning}, false, true},
		{"resident object, running", store.Agent{Name: "greeter", Runtime: "llm", Status: store.AgentRunning}, true, true},
		{"resident object, exited", store.Agent{Name: "greeter", Runtime: "llm", Status: store.AgentExited, ExitCode: &zero}, false, false},
	} {
		if got := sv.wanted(&c.a); got != c.want {
			t.Errorf("%s: wanted = %v, want %v", c.name, got, c.want)
		}
		if got := sv.crashed(&c.a, false); got != c.crashed {
			t.Errorf("%s: crashed = %v, want %v", c.name, got, c.crashed)
		}
		if sv.crashed(&c.a, true) {
			t.Errorf("%s: a live process never crashed", c.name)
		}
	}
	// An owner whose pm done left its task's merge waiting for a decision
	// (local changes, review, a conflict: the human's or the parent
	// owner's) exits with pm done's code, 5; it is not respawned to run pm
	// done again (pm reject starts it when the work is sent back).
	five := 5
	if _, err := s.UpdateTask(tk.ID, func(t *store.Task) error {
		t.Merge = &store.TaskMerge{State: store.MergeDirty, Paths: []string{"index.html"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if sv.wanted(&store.Agent{Name: owner.Name, TaskID: tk.ID, Runtime: "llm", Status: store.AgentExited, ExitCode: &five}) {
		t.Error("an owner whose merge waits for a decision is not wanted")
	}
	if _, err := s.UpdateTask(tk.ID, func(t *store.Task) error { t.Merge = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := phase.Close(s, fsstate.New(s), store.Human, tk.ID, ph.ID, "ended"); err != nil {
		t.Fatal(err)
	}
	if sv.wanted(&store.Agent{Name: "oak_0001", TaskID: tk.ID, PhaseID: ph.ID, Role: "designer", Runtime: "llm", Status: store.AgentRunning}) {
		t.Error("a role agent of a closed phase is not wanted")
	}
}

// A crashed owner is respawned (restarts counted, the pid watched so the next
// kill -9 is seen at once); CrashLimit crashes within the window mark it
// failed and raise a request for the human; then nothing is live and the
// supervisor exits.
func TestRespawnThenGiveUp(t *testing.T) {
	s := newStore(t)
	l := fakeHost(t, s)
	_, owner := owned(t, s)
	var mu sync.Mutex
	var raised []string
	sv := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(),
		Policy: Policy{CrashLimit: 3, CrashWindow: time.Minute, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond},
		RaiseHuman: func(name, text string) error {
			mu.Lock()
			defer mu.Unlock()
			raised = append(raised, name+": "+text)
			return nil
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- sv.Run(ctx) }()

	for i := 1; i <= 2; i++ {
		waitEvent(t, s, bus.EvAgentRespawned, owner.Name, i)
		a, err := s.Agent(owner.Name)
		if err != nil {
			t.Fatal(err)
		}
		if a.Restarts != i || a.Status != store.AgentRunning || !driver.NewProcess(0).Alive(a.Handle) {
			t.Fatalf("after respawn %d: %+v", i, a)
		}
		if !Running(s) {
			t.Fatal("the supervisor's lock is not held")
		}
		if err := syscall.Kill(a.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	waitEvent(t, s, bus.EvAgentFailed, owner.Name, 1)
	if err := <-ran; err != nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (ctx %v): want a clean exit once nothing is live", err, ctx.Err())
	}
	a, err := s.Agent(owner.Name)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != store.AgentFailed || !strings.Contains(a.Reason, "crashed 3 times") || a.Restarts != 2 {
		t.Fatalf("given up: %+v", a)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(raised) != 1 || !strings.HasPrefix(raised[0], owner.Name+": Agent @"+owner.Name+" (owner, task ") || !strings.Contains(raised[0], "pm kill") {
		t.Fatalf("raised %q", raised)
	}
	if Running(s) {
		t.Fatal("the lock outlived Run")
	}
}

// One supervisor per state directory: a second Run returns at once while the
// first holds the lock; with nothing live the first exits by itself.
func TestOnePerStateDir(t *testing.T) {
	s := newStore(t)
	if err := (&Supervisor{Store: s, State: fsstate.New(s), Log: quiet()}).Run(context.Background()); err != nil {
		t.Fatalf("nothing live: %v", err)
	}
	l := fakeHost(t, s)
	_, owner := owned(t, s)
	first := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(), Policy: DefaultPolicy}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- first.Run(ctx) }()
	waitEvent(t, s, bus.EvAgentRespawned, owner.Name, 1)
	second := &Supervisor{Store: s, State: fsstate.New(s), Launcher: l, Log: quiet(), Policy: DefaultPolicy}
	if err := second.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Agent(owner.Name)
	if a.Restarts != 1 {
		t.Fatalf("the second supervisor acted: %+v", a)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}
