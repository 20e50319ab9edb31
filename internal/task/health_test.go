package task_test

import (
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
	"github.com/plasmodium/pm/internal/task"
)

func TestHealthOf(t *testing.T) {
	three := 3
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name   string
		task   store.Task
		owner  *store.Agent
		kids   []store.Task
		req    bool
		want   task.State
		reason string
	}{
		{name: "done", task: store.Task{Status: store.TaskDone}, want: task.StateDone},
		{name: "killed", task: store.Task{Status: store.TaskKilled}, want: task.StateKilled},
		{name: "blocked", task: store.Task{Status: store.TaskBlocked, BlockedBy: []string{"tk-00000b"}}, kids: []store.Task{{ID: "tk-00000b", Status: store.TaskActive}}, want: task.StateBlocked},
		{name: "blocker killed", task: store.Task{Status: store.TaskBlocked, BlockedBy: []string{"tk-00000b"}}, kids: []store.Task{{ID: "tk-00000b", Status: store.TaskKilled}}, want: task.StateStalled, reason: "waits for tk-00000b, which was killed: it will never start"},
		{name: "one of two blockers killed", task: store.Task{Status: store.TaskBlocked, BlockedBy: []string{"tk-00000b", "tk-00000c"}}, kids: []store.Task{{ID: "tk-00000b", Status: store.TaskActive}, {ID: "tk-00000c", Status: store.TaskKilled}}, want: task.StateStalled, reason: "waits for tk-00000c, which was killed: it will never start"},
		{name: "owner exited", task: store.Task{Status: store.TaskActive}, owner: &store.Agent{Status: store.AgentExited, ExitCode: &three, Reason: "bye"}, want: task.StateStalled, reason: "owner @own exited: bye"},
		{name: "owner failed", task: store.Task{Status: store.TaskActive}, owner: &store.Agent{Status: store.AgentFailed, Reason: "crash loop"}, want: task.StateStalled, reason: "owner @own failed: crash loop"},
		{name: "owner gone", task: store.Task{Status: store.TaskActive}, owner: &store.Agent{Status: store.AgentRunning}, want: task.StateStalled, reason: "owner @own is recorded running but its process is gone"},
		{name: "manual", task: store.Task{Status: store.TaskActive, Runtime: config.RuntimeNone}, owner: &store.Agent{Status: store.AgentPending}, want: task.StateManual},
		{name: "starting", task: store.Task{Status: store.TaskActive, Runtime: config.RuntimeExec}, owner: &store.Agent{Status: store.AgentPending}, want: task.StateStarting},
		{name: "asked human", task: store.Task{Status: store.TaskActive, Runtime: config.RuntimeNone}, owner: &store.Agent{Status: store.AgentPending}, req: true, want: task.StateWaitingHuman},
		{name: "waiting children", task: store.Task{Status: store.TaskActive, Children: []string{"tk-00000c"}}, kids: []store.Task{{ID: "tk-00000c", Status: store.TaskActive}}, want: task.StateWaitingKids},
		{name: "children done", task: store.Task{Status: store.TaskActive, Children: []string{"tk-00000c"}}, kids: []store.Task{{ID: "tk-00000c", Status: store.TaskDone}}, want: task.StateWorking},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := storetest.New(t)
			c.task.ID, c.task.Owner, c.task.CreatedAt = "tk-00000a", "own", now
			if err := s.WriteTask(&c.task); err != nil {
				t.Fatal(err)
			}
			for _, k := range c.kids {
				k.CreatedAt = now
				if err := s.WriteTask(&k); err != nil {
					t.Fatal(err)
				}
			}
			if c.owner != nil {
				c.owner.Name, c.owner.TaskID = "own", "tk-00000a"
				if err := s.WriteAgent(c.owner); err != nil {
					t.Fatal(err)
				}
			}
			var pending []*store.Request
			if c.req {
				pending = []*store.Request{{ID: "rq-00000a", TaskID: "tk-00000a", Status: store.RequestPending}}
			}
			h := task.HealthOf(s, fsstate.New(s), &c.task, pending)
			if h.State != c.want || h.Reason != c.reason {
				t.Fatalf("got %q (%q), want %q (%q)", h.State, h.Reason, c.want, c.reason)
			}
			if h.State == task.StateStalled && h.Next == "" {
				t.Fatal("a stalled task must name the next step")
			}
		})
	}
}
