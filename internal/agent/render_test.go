package agent

import (
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// What a prompt marks for the CLI (the owner's quick reference of pm
// commands and their exit codes) reaches an exec agent, which drives pm
// by commands, and not an llm agent, whose tools say it already: it cost
// every llm owner call ~1.3 KB (issue 26). No marker reaches either.
func TestRenderCLIOnly(t *testing.T) {
	s := storetest.New(t)
	for _, tt := range []struct {
		runtime config.RuntimeName
		cli     bool
	}{{config.RuntimeExec, true}, {config.RuntimeLLM, false}} {
		a := &store.Agent{Name: "oak_0001", Prompt: "owner", Runtime: tt.runtime}
		if err := s.WriteAgent(a); err != nil {
			t.Fatal(err)
		}
		text, err := Render(s, fsstate.New(s), a)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(text, `pm phase "Name" --limit 10`); got != tt.cli {
			t.Errorf("%s owner: quick reference %v, want %v", tt.runtime, got, tt.cli)
		}
		if got := strings.Contains(text, "Exit codes: 3 refused by a limit"); got != tt.cli {
			t.Errorf("%s owner: exit codes %v, want %v", tt.runtime, got, tt.cli)
		}
		if strings.Contains(text, "<!--") || !strings.Contains(text, "## Workflow") || !strings.Contains(text, "Roles: `designer`") {
			t.Errorf("%s owner: a marker left, or the workflow cut:\n%s", tt.runtime, text)
		}
	}
}
