package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/driver"
)

// A host killed -9 leaves its broker socket directory in the run directory
// (issue 20); the supervisor, which sees the death, removes it there and
// then (before a respawn, at a give-up), not only the next host to start:
// a given-up agent's host never starts again. A live host's directory stays.
func TestSupervisorSweepsDeadHostsSockets(t *testing.T) {
	for _, c := range []struct {
		name string
		see  func(r *rig, name string)
	}{
		{"respawn", func(r *rig, name string) { r.sv.respawn(name) }},
		{"give-up", func(r *rig, name string) { r.sv.giveUp(name, 5) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A short TMPDIR of its own: the run directory under it, not
			// the user's real one (a long one would fall back to /tmp).
			tmp, err := os.MkdirTemp("/tmp", "pmsv")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmp) })
			t.Setenv("TMPDIR", tmp)
			run, err := broker.RunDir()
			if err != nil || !strings.HasPrefix(run, tmp) {
				t.Fatalf("RunDir %q, %v: not under %s", run, err, tmp)
			}
			self, err := driver.Self()
			if err != nil {
				t.Fatal(err)
			}
			rnd := strings.Repeat("ab", 16)
			dead := filepath.Join(run, fmt.Sprintf("%d-%d-%s", self.Pid, self.PidStart+1, rnd)) // this pid, another start: gone
			live := filepath.Join(run, fmt.Sprintf("%d-%d-%s", self.Pid, self.PidStart, rnd))
			for _, d := range []string{dead, live} {
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}

			r := newRig(t, Policy{CrashLimit: 5, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour})
			_, a := r.startOwner(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r.sv.init(ctx)
			r.fake.Exit(a.Handle, 128+9)
			c.see(r, a.Name)
			stopTimers(r.sv)
			if _, err := os.Stat(dead); !os.IsNotExist(err) {
				t.Errorf("the dead host's socket directory is still there after the supervisor's %s (%v)", c.name, err)
			}
			if _, err := os.Stat(live); err != nil {
				t.Errorf("a live host's socket directory was removed: %v", err)
			}
		})
	}
}
