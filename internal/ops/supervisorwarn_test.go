package ops

import (
	"strings"
	"testing"
)

// pm status says what the live supervisor reports: that it polls the bus,
// and which agent records it cannot read; nothing when it has nothing to
// say or none is live.
func TestSupervisorWarnings(t *testing.T) {
	s := newStore(t)
	if w := SupervisorWarnings(s); w != nil {
		t.Fatalf("no supervisor, yet %q", w)
	}
	if err := s.MarkSupervisorWanted(); err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := s.TryLockSupervisor() // this process is the live supervisor
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	defer unlock()
	if w := SupervisorWarnings(s); w != nil {
		t.Fatalf("a supervisor with nothing to say, yet %q", w)
	}
	in := s.SupervisorInfo()
	in.Polling, in.Unreadable = "polling the bus every 1s: inotify limit reached", []string{"fir_0001"}
	if err := s.SetSupervisorInfo(in); err != nil {
		t.Fatal(err)
	}
	w := SupervisorWarnings(s)
	if len(w) != 2 || !strings.Contains(w[0], "polling the bus") || !strings.Contains(w[1], "fir_0001") || !strings.Contains(w[1], "pm doctor --check") {
		t.Fatalf("warnings %q", w)
	}
	_ = unlock()
	if w := SupervisorWarnings(s); w != nil {
		t.Fatalf("the supervisor is gone, yet %q", w)
	}
}
