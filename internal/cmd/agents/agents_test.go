package agents

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/store"
)

// pm agents shows each agent's last activity (as pm status derives it) and
// an llm agent's state in one LAST column, and fits the terminal: at 80
// columns the least needed columns are left out whole (and named) before
// any is cut to nothing; off a terminal, and with --wide, every column is
// whole (issue 25).
func TestAgentsTableFits(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := now.Add(-time.Hour)
	agents := []*store.Agent{
		{Name: "oak_0001", TaskID: "tk-a1b2c3", Runtime: "exec", Status: store.AgentRunning,
			Sandbox: "landlock + mount namespace (hidden state)", StartedAt: &started},
		{Name: "elm_0002", TaskID: "tk-a1b2c3", PhaseID: "ph-d4e5f6", Role: "designer", Runtime: "llm", Status: store.AgentRunning,
			Activity: "waiting", ActiveAt: &started, Sandbox: "landlock + mount namespace (hidden state)"},
	}
	agents[0].Pid, agents[0].Containment = 4242, "run marker + subreaper, nproc 1024 per sandboxed command"
	agents[1].Pid, agents[1].Containment = 4243, "cgroup, pids.max 1024"
	last := map[string]time.Time{"oak_0001": now.Add(-90 * time.Second), "elm_0002": now.Add(-3 * time.Second)}
	for _, tt := range []struct {
		name    string
		width   int
		wide    bool
		dropped string
	}{
		{"off a terminal", 0, false, ""},
		{"wide", 80, true, ""},
		{"120 columns", 120, false, "CODE-DESIGNER"},
		{"80 columns", 80, false, "CODE-DESIGNER, CONTAINMENT, RESTARTS, SANDBOX"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			tb := table(agents, last, now, tt.width, tt.wide)
			if err := tb.Write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if n := utf8.RuneCountInString(l); tt.width > 0 && !tt.wide && n > tt.width {
					t.Errorf("line of %d columns over %d: %q", n, tt.width, l)
				}
			}
			for _, id := range []string{"oak_0001", "elm_0002", "tk-a1b2c3", "ph-d4e5f6", "4242"} {
				if !strings.Contains(out, id) {
					t.Errorf("%s was cut:\n%s", id, out)
				}
			}
			if !strings.Contains(out, "LAST") || !strings.Contains(out, "1m ago") || !strings.Contains(out, "3s ago, waiting") {
				t.Errorf("no last activity:\n%s", out)
			}
			if got := strings.Join(tb.Dropped, ", "); got != tt.dropped {
				t.Errorf("dropped %q, want %q:\n%s", got, tt.dropped, out)
			}
			if tt.dropped == "" && (!strings.Contains(out, "CONTAINMENT") || !strings.Contains(out, "SANDBOX")) {
				t.Errorf("a column is missing:\n%s", out)
			}
		})
	}
}
