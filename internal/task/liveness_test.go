package task_test

import (
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
	"github.com/plasmodium/pm/internal/task"
)

// A live task whose open room nobody moves reads idle, then stuck, with the
// way out; its last activity and idle time are on its health (issue 25:
// after pm extend-phase the room sat at 9/10 and pm status said working).
// The clock is the store's: no test waits for time to pass.
func TestIdleHealth(t *testing.T) {
	cases := []struct {
		name      string
		later     time.Duration
		idleAfter string
		asked     bool
		want      task.State
	}{
		{name: "fresh", later: 0, want: task.StateWorking},
		{name: "below the threshold", later: 9 * time.Minute, want: task.StateWorking},
		{name: "idle", later: 11 * time.Minute, want: task.StateIdle},
		{name: "stuck", later: 31 * time.Minute, want: task.StateStuck},
		{name: "configured shorter", later: 2 * time.Minute, idleAfter: "1m", want: task.StateIdle},
		{name: "never", later: 48 * time.Hour, idleAfter: "0", want: task.StateWorking},
		{name: "a question for the human comes first", later: time.Hour, asked: true, want: task.StateWaitingHuman},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := storetest.New(t)
			s.Config().Runtime.IdleAfter = c.idleAfter // this process's copy: tests change it
			start := time.Now().UTC()
			self, err := driver.Self()
			if err != nil {
				t.Fatal(err)
			}
			tk := &store.Task{ID: "tk-00000a", Owner: "own", Status: store.TaskActive, Runtime: config.RuntimeExec, CreatedAt: start}
			if err := s.WriteTask(tk); err != nil {
				t.Fatal(err)
			}
			if err := s.WriteAgent(&store.Agent{Name: "own", TaskID: tk.ID, Status: store.AgentRunning, Handle: self, Runtime: config.RuntimeExec, CreatedAt: start, StartedAt: &start}); err != nil {
				t.Fatal(err)
			}
			ph, err := s.CreatePhase(tk.ID, func(_ *store.Task, _ []*store.Phase, id string) (*store.Phase, error) {
				return &store.Phase{ID: id, TaskID: tk.ID, Name: "Talk", MessageLimit: 10, Roles: []string{"designer"}, Status: store.PhaseActive, CreatedAt: start}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var pending []*store.Request
			if c.asked {
				pending = []*store.Request{{ID: "rq-00000a", TaskID: tk.ID, Status: store.RequestPending}}
			}
			s.Now = func() time.Time { return time.Now().Add(c.later) }
			h := task.HealthOf(s, fsstate.New(s), tk, pending)
			if h.State != c.want {
				t.Fatalf("state %q (%s), want %q", h.State, h.Reason, c.want)
			}
			if h.LastActivity == nil || h.LastActivity.Before(start.Add(-time.Second)) {
				t.Fatalf("last activity %v, want at or after the task's start %v", h.LastActivity, start)
			}
			if min := int64((c.later - time.Minute) / time.Second); h.IdleSeconds < min {
				t.Fatalf("idle %ds, want at least %ds", h.IdleSeconds, min)
			}
			if h.State == task.StateIdle || h.State == task.StateStuck {
				if !strings.Contains(h.Reason, ph.ID) || !strings.Contains(h.Next, "pm chat --phase "+ph.ID) || !strings.Contains(h.Next, "pm kill "+tk.ID+" --restart") {
					t.Fatalf("reason %q / next %q: want the room and the way out", h.Reason, h.Next)
				}
			}
		})
	}
}
