package agent

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// The event a host's end publishes says what its record says: an agent
// recorded exited is agent.exited, one recorded failed (a budget, the
// loop breaker's stop, a start that failed) is agent.failed with the
// reason and the exit code, so a follower of the bus never reads "exited"
// for an agent pm status shows failed.
func TestFinishEventAgreesWithRecord(t *testing.T) {
	for _, tt := range []struct {
		name, reason string
		code         int
		status       store.AgentStatus
		kind         bus.Kind
	}{
		{"ended by itself", "", 0, store.AgentExited, bus.EvAgentExited},
		{"crashed", "", 2, store.AgentExited, bus.EvAgentExited},
		{"given up", "over its wall-time budget of 1s (budgets.agent.max_wall_seconds)", 143, store.AgentFailed, bus.EvAgentFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := storetest.New(t)
			a := &store.Agent{Name: "oak_0001", TaskID: "tk-000001", Status: store.AgentRunning, Handle: driver.Handle{Pid: os.Getpid()}}
			if err := s.WriteAgent(a); err != nil {
				t.Fatal(err)
			}
			_ = finish(s, fsstate.New(s), slog.New(slog.NewTextHandler(io.Discard, nil)), a, tt.code, tt.reason)
			r, err := s.Agent(a.Name)
			if err != nil {
				t.Fatal(err)
			}
			evs, _, err := s.Bus().Tail(10)
			if err != nil {
				t.Fatal(err)
			}
			var last bus.Event
			for _, d := range evs {
				if d.Event.Agent == a.Name {
					last = d.Event
				}
			}
			var want bus.Payload = bus.AgentExited{ExitCode: tt.code}
			if tt.kind == bus.EvAgentFailed {
				want = bus.AgentFailed{ExitCode: tt.code}
			}
			if r.Status != tt.status || last.Kind != tt.kind || last.Text != tt.reason || last.Data != want {
				t.Fatalf("record %s (%q); event %s %q %#v; want %s and %s", r.Status, r.Reason, last.Kind, last.Text, last.Data, tt.status, tt.kind)
			}
		})
	}
}
