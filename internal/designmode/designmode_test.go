package designmode

import (
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
)

func b(v bool) *bool { return &v }

// The precedence table: cli > env > frontmatter > config; unset defers.
func TestResolvePrecedence(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		in     Inputs
		on     bool
		source Source
	}{
		{"nothing set: off, no source", Inputs{}, false, ""},
		{"config on", Inputs{Config: b(true)}, true, SourceConfig},
		{"config off", Inputs{Config: b(false)}, false, SourceConfig},
		{"frontmatter on beats config off", Inputs{Frontmatter: b(true), Config: b(false)}, true, SourceFrontmatter},
		{"frontmatter off beats config on", Inputs{Frontmatter: b(false), Config: b(true)}, false, SourceFrontmatter},
		{"env on beats frontmatter off", Inputs{Env: "1", Frontmatter: b(false), Config: b(false)}, true, SourceEnv},
		{"env off beats frontmatter and config on", Inputs{Env: "0", Frontmatter: b(true), Config: b(true)}, false, SourceEnv},
		{"env words", Inputs{Env: " Yes "}, true, SourceEnv},
		{"env empty defers", Inputs{Env: "", Config: b(true)}, true, SourceConfig},
		{"cli on beats env off", Inputs{CLI: b(true), Env: "0", Frontmatter: b(false), Config: b(false)}, true, SourceCLI},
		{"cli off beats everything on", Inputs{CLI: b(false), Env: "1", Frontmatter: b(true), Config: b(true)}, false, SourceCLI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Resolve(tt.in, now)
			if err != nil {
				t.Fatal(err)
			}
			if m.Enabled != tt.on || m.Source != tt.source {
				t.Fatalf("Resolve = %+v, want enabled=%v source=%q", m, tt.on, tt.source)
			}
			if tt.on != (m.Since != nil) || (m.Since != nil && !m.Since.Equal(now)) {
				t.Fatalf("Since = %v, want %v only when on", m.Since, now)
			}
		})
	}
}

func TestResolveBadEnv(t *testing.T) {
	for _, v := range []string{"2", "enable", "tru"} {
		_, err := Resolve(Inputs{Env: v, CLI: b(true)}, time.Now())
		if !errs.Is(err, errs.Usage) || errs.TryOf(err) == "" || !strings.Contains(err.Error(), EnvVar) {
			t.Errorf("PM_CODE_DESIGNER=%q: err %v, want a usage error naming the variable with a Try: line", v, err)
		}
	}
}

func TestKeepAndString(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	prev := &Mode{Enabled: true, Source: SourceCLI, Since: &t0}
	if got := Keep(prev, Mode{Enabled: true, Source: SourceCLI, Since: &t1}); !got.Since.Equal(t0) {
		t.Errorf("same source kept on: since %v, want %v", got.Since, t0)
	}
	if got := Keep(prev, Mode{Enabled: true, Source: SourceEnv, Since: &t1}); !got.Since.Equal(t1) {
		t.Errorf("other source: since %v, want %v", got.Since, t1)
	}
	if got := Keep(prev, Mode{}); got.Since != nil {
		t.Errorf("turned off: since %v, want none", got.Since)
	}
	for _, c := range []struct {
		m    *Mode
		want string
	}{{nil, "off"}, {&Mode{}, "off"}, {prev, "on (cli)"}, {&Mode{Source: SourceEnv}, "off (env)"}} {
		if got := c.m.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.m, got, c.want)
		}
	}
}
