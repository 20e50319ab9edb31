package designmode

import (
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/errs"
)

// EnvVar turns the mode on (1) or off (0) for every agent started from this
// environment.
const EnvVar = "PM_CODE_DESIGNER"

// Source says what decided the mode.
type Source string

const (
	SourceCLI         Source = "cli"
	SourceEnv         Source = "env"
	SourceFrontmatter Source = "frontmatter"
	SourceConfig      Source = "config"
)

// Mode is whether code-designer mode is on for an agent, which source
// decided it and since when it is on (the seed's ModeConfig).
type Mode struct {
	Enabled bool       `json:"enabled"`
	Source  Source     `json:"source,omitempty"` // "" when no source set it (off by default)
	Since   *time.Time `json:"since,omitempty"`  // when it was turned on; nil when off
}

// On reports whether m is a mode that is on; a nil mode is off.
func (m *Mode) On() bool { return m != nil && m.Enabled }

// String is how pm agents shows it: "on (cli)", "off (env)", "off".
func (m *Mode) String() string {
	switch {
	case m == nil || m.Source == "" && !m.Enabled:
		return "off"
	case m.Enabled:
		return "on (" + string(m.Source) + ")"
	}
	return "off (" + string(m.Source) + ")"
}

// Inputs are the four sources; nil (or "" for Env) means not set.
type Inputs struct {
	CLI         *bool
	Env         string // the raw value of PM_CODE_DESIGNER
	Frontmatter *bool
	Config      *bool
}

// Resolve applies the precedence cli > env > frontmatter > config and
// stamps Since with now when the mode is on. A PM_CODE_DESIGNER value that
// is not a boolean is a usage error.
func Resolve(in Inputs, now time.Time) (Mode, error) {
	env, err := ParseEnv(in.Env)
	if err != nil {
		return Mode{}, err
	}
	for _, s := range []struct {
		v   *bool
		src Source
	}{{in.CLI, SourceCLI}, {env, SourceEnv}, {in.Frontmatter, SourceFrontmatter}, {in.Config, SourceConfig}} {
		if s.v == nil {
			continue
		}
		m := Mode{Enabled: *s.v, Source: s.src}
		if m.Enabled {
			t := now.UTC()
			m.Since = &t
		}
		return m, nil
	}
	return Mode{}, nil
}

// ParseEnv reads PM_CODE_DESIGNER: "" is not set; 1/true/on/yes and
// 0/false/off/no (any case) are on and off; anything else is an error.
func ParseEnv(v string) (*bool, error) {
	on, off := true, false
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return nil, nil
	case "1", "true", "on", "yes":
		return &on, nil
	case "0", "false", "off", "no":
		return &off, nil
	}
	return nil, errs.Usagef(EnvVar+"=1 to turn code-designer mode on, "+EnvVar+"=0 (or unset it) to turn it off",
		"%s=%q is not a boolean", EnvVar, v)
}

// Keep returns next, but with prev's Since when both are on from the same
// source: re-resolving an agent's mode on every call does not reset since
// when it has been on.
func Keep(prev *Mode, next Mode) Mode {
	if prev.On() && next.Enabled && prev.Source == next.Source && prev.Since != nil {
		next.Since = prev.Since
	}
	return next
}

// Equal reports whether m and o are the same decision (a nil o is none).
func (m Mode) Equal(o *Mode) bool {
	if o == nil {
		return false
	}
	return m.Enabled == o.Enabled && m.Source == o.Source &&
		(m.Since == nil) == (o.Since == nil) && (m.Since == nil || m.Since.Equal(*o.Since))
}
