package ops

import (
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// A resident's mode is decided again on every call; since stays while it
// stays on from the same source; a bad PM_CODE_DESIGNER changes nothing.
func TestResidentModePerCall(t *testing.T) {
	s := newStore(t)
	now := base
	s.Now = func() time.Time { return now }
	on, off := true, false
	env := ""
	sess := &Session{Store: s, State: fsstate.New(s), Actor: store.Human, Getenv: func(k string) string {
		if k == designmode.EnvVar {
			return env
		}
		return ""
	}}
	steps := []struct {
		cli    *bool
		env    string
		at     time.Duration
		on     bool
		source designmode.Source
		since  time.Duration // want since = base+since when on
		code   errs.Code
	}{
		{cli: &on, at: 0, on: true, source: designmode.SourceCLI, since: 0},
		{cli: &on, at: time.Minute, on: true, source: designmode.SourceCLI, since: 0},
		{env: "1", at: 2 * time.Minute, on: true, source: designmode.SourceEnv, since: 2 * time.Minute},
		{env: "nope", at: 3 * time.Minute, on: true, source: designmode.SourceEnv, since: 2 * time.Minute, code: errs.Usage},
		{cli: &off, env: "1", at: 4 * time.Minute, on: false, source: designmode.SourceCLI},
		{at: 5 * time.Minute, on: false, source: ""},
	}
	for i, st := range steps {
		now, env, sess.CodeDesigner = base.Add(st.at), st.env, st.cli
		po, err := lookupPO(sess, "greeter")
		if err != nil {
			t.Fatal(err)
		}
		if err := residentMode(sess, po); errs.CodeOf(err) != st.code || (st.code == 0) != (err == nil) {
			t.Fatalf("step %d: err %v, want code %d", i, err, st.code)
		}
		a, err := s.Agent("greeter")
		if err != nil {
			t.Fatal(err)
		}
		m := a.CodeDesigner
		if m == nil || m.Enabled != st.on || m.Source != st.source || (m.Since != nil) != st.on ||
			(st.on && !m.Since.Equal(base.Add(st.since))) {
			t.Fatalf("step %d: mode %+v, want on=%v source=%q since=+%s", i, m, st.on, st.source, st.since)
		}
	}
}
