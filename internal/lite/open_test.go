package lite_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// The two executables open a session the same way: pm's short commands
// (lite.Process.Open) and pm-full's (cmdutil.Factory) find the same state
// directory from the same environment and working directory, act as the
// same actor, mask the same secrets and warn on the same stream. A change
// to either side alone fails here.
func TestOneSessionOpening(t *testing.T) {
	s := storetest.New(t)
	if _, err := s.CreateAgent(&store.Agent{Name: "cedar_0001", Prompt: "owner", Runtime: config.RuntimeNone, Status: store.AgentRunning}); err != nil {
		t.Fatal(err)
	}
	project := filepath.Dir(s.Root)
	sub := filepath.Join(project, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	const key = "sk-open-0123456789"
	for _, tt := range []struct {
		name string
		env  map[string]string
		wd   string
	}{
		{"found walking up, as the human", map[string]string{"OPENAI_API_KEY": key}, sub},
		{"PM_HOME, as an agent", map[string]string{"PM_HOME": s.Root, "PM_AGENT": "cedar_0001", "MY_TOKEN": key}, t.TempDir()},
		{"an unknown agent", map[string]string{"PM_AGENT": "nobody_0001"}, project},
		{"no state directory", nil, t.TempDir()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			environ := func() []string {
				var out []string
				for k, v := range tt.env {
					out = append(out, k+"="+v)
				}
				return out
			}
			getwd := func() (string, error) { return tt.wd, nil }
			var warn bytes.Buffer
			p := lite.Process{Getenv: getenv, Environ: environ, Getwd: getwd, Stderr: &warn}
			ls, lst, lactor, lerr := p.Open()
			defer lst.Close()
			f := cmdutil.New(context.Background(), strings.NewReader(""), &bytes.Buffer{}, &warn)
			f.Getenv, f.Environ, f.Getwd = getenv, environ, getwd
			fs, ferr := f.Store()
			var factor store.Actor
			if ferr == nil {
				factor, ferr = f.Actor(fs)
			}
			if (lerr == nil) != (ferr == nil) || lerr != nil && lerr.Error() != ferr.Error() {
				t.Fatalf("pm: %v; pm-full: %v", lerr, ferr)
			}
			if lerr != nil {
				return
			}
			if ls.Root != fs.Root || ls.Warn != fs.Warn || !reflect.DeepEqual(lactor, factor) {
				t.Errorf("pm opened %s as %+v (warn %p), pm-full %s as %+v (warn %p)", ls.Root, lactor, ls.Warn, fs.Root, factor, fs.Warn)
			}
			text := "the key is " + key
			if got, want := ls.Secrets.Mask(text), fs.Secrets.Mask(text); got != want || strings.Contains(got, key) != (tt.env["OPENAI_API_KEY"] == "" && tt.env["MY_TOKEN"] == "") {
				t.Errorf("pm masks %q, pm-full %q", got, want)
			}
		})
	}
}
