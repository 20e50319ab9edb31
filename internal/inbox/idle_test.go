package inbox_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

func TestIdleOut(t *testing.T) {
	cases := []struct {
		name   string
		status store.AgentStatus
		pid    int // the caller's pid; the record's is 42
		unread bool
		want   bool
	}{
		{"nothing to do", store.AgentRunning, 42, false, true},
		{"a message waits", store.AgentRunning, 42, true, false},
		{"already ended", store.AgentKilled, 42, false, false},
		{"another run", store.AgentRunning, 7, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if err := s.WriteAgent(&store.Agent{Name: "greeter", Prompt: "greeter", Status: c.status, Handle: driver.Handle{Pid: 42}}); err != nil {
				t.Fatal(err)
			}
			if c.unread {
				if _, err := inbox.Send(s, fsstate.New(s), inbox.Message{Kind: inbox.KindRequest, From: "human", To: "greeter", Corr: "rq-000001", Text: "hi"}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := inbox.IdleOut(s, fsstate.New(s), "greeter", c.pid)
			if err != nil || got != c.want {
				t.Fatalf("IdleOut = %v, %v; want %v", got, err, c.want)
			}
			a, _ := s.Agent("greeter")
			if ended := a.Status == store.AgentExited && a.Reason == "idle"; ended != c.want {
				t.Fatalf("record %s %q after IdleOut %v", a.Status, a.Reason, got)
			}
		})
	}
}
