package task_test

import (
	"sync"
	"testing"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// orphans are hosts the fake driver runs that no agent record names: pm
// can neither see nor stop them.
func orphans(t *testing.T, s *store.Store, fake *drivertest.Driver) []driver.Handle {
	t.Helper()
	agents, err := s.Agents()
	if err != nil {
		t.Fatal(err)
	}
	known := map[driver.Handle]bool{}
	for _, a := range agents {
		known[a.Handle] = true
	}
	var out []driver.Handle
	for i := range len(fake.Started()) { // the fake's handles are numbered from 1
		h := driver.Handle{Pid: 1_000_000 + i + 1, PidStart: uint64(i + 1)}
		if fake.Alive(h) && !known[h] {
			out = append(out, h)
		}
	}
	return out
}

// pm reset --force racing a start (a respawn, or the owner start of a pm
// task) must end every host, including one started between reset's listing
// and its delete: none may run on with no record (issue 8 item 4). The
// hooks force each interleaving; no sleeps.
func TestResetLeavesNoHostWithoutRecord(t *testing.T) {
	tests := []struct {
		name string
		race func(t *testing.T, s *store.Store, l *agent.Launcher, fake *drivertest.Driver) (remove func())
	}{
		{
			// A new agent is created and started after reset listed the agents.
			name: "start after the listing",
			race: func(t *testing.T, s *store.Store, l *agent.Launcher, fake *drivertest.Driver) func() {
				done := false
				return crashpoint.SetHook(func(name string) {
					if name != "task.reset.listed" || done {
						return
					}
					done = true
					a, err := agent.New(s, fsstate.New(s), store.Agent{Prompt: "owner", Runtime: config.RuntimeLLM})
					if err != nil {
						t.Error(err)
						return
					}
					if err := l.Start(a.Name); err != nil {
						t.Error(err)
					}
				})
			},
		},
		{
			// A start (of an agent reset has listed) is spawning while reset
			// goes on: it holds the agent's lock until its record says so.
			name: "start in progress during the reset",
			race: func(t *testing.T, s *store.Store, l *agent.Launcher, fake *drivertest.Driver) func() {
				a, err := agent.New(s, fsstate.New(s), store.Agent{Prompt: "owner", Runtime: config.RuntimeLLM})
				if err != nil {
					t.Fatal(err)
				}
				listed := make(chan struct{})
				started := make(chan error, 1)
				fake.OnStart(func(driver.Handle, driver.Spec) { <-listed })
				remove := crashpoint.SetHook(func(name string) {
					if name == "task.reset.listed" {
						select {
						case <-listed:
						default:
							close(listed)
						}
					}
				})
				go func() { started <- l.Start(a.Name) }()
				return func() {
					remove()
					<-started // its error (a vanished record) is fine; an orphan is not
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			fake := drivertest.New()
			l := &agent.Launcher{Store: e.s, State: fsstate.New(e.s), Exe: "pm", Driver: fake}
			running, err := agent.New(e.s, fsstate.New(e.s), store.Agent{Prompt: "owner", Runtime: config.RuntimeLLM})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Start(running.Name); err != nil {
				t.Fatal(err)
			}
			remove := tt.race(t, e.s, l, fake)
			_, err = task.ResetWith(e.s, l, store.Human, true)
			remove()
			if err != nil {
				t.Fatal(err)
			}
			if o := orphans(t, e.s, fake); len(o) > 0 {
				t.Fatalf("%d hosts run with no agent record: %v", len(o), o)
			}
		})
	}
}

// The same race left to the scheduler: starters create and start agents
// while reset runs, 30 rounds; no round may leave a host without a record.
func TestResetRaceWithStarters(t *testing.T) {
	for round := range 30 {
		e := newEnv(t)
		fake := drivertest.New()
		l := &agent.Launcher{Store: e.s, State: fsstate.New(e.s), Exe: "pm", Driver: fake}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for range 5 {
					a, err := agent.New(e.s, fsstate.New(e.s), store.Agent{Prompt: "owner", Runtime: config.RuntimeLLM})
					if err != nil {
						continue // reset removed the directory under it: nothing was started
					}
					_ = l.Start(a.Name) // refused or failed once reset has passed: fine
				}
			})
		}
		if _, err := task.ResetWith(e.s, l, store.Human, true); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if o := orphans(t, e.s, fake); len(o) > 0 {
			t.Fatalf("round %d: %d hosts run with no agent record: %v", round, len(o), o)
		}
	}
}
