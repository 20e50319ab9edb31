package supervisor

import (
	"context"
	"testing"
	"time"
)

// A starter (pm send, a prompt-object call) that starts the agent between
// the supervisor's look at a dead host and its respawn must not give the
// agent two hosts on one inbox: the respawn re-checks under the agent's lock.
// The interleaving is forced through the beforeRespawn hook, 30 times.
func TestRespawnRacingAStartGivesOneHost(t *testing.T) {
	slow := Policy{CrashLimit: 100, CrashWindow: time.Hour, BaseBackoff: time.Hour, MaxBackoff: time.Hour}
	for i := range 30 {
		r := newRig(t, slow)
		_, a := r.startOwner(t)
		ctx, cancel := context.WithCancel(context.Background())
		r.sv.init(ctx)
		r.fake.Exit(a.Handle, 128+9) // the host is killed -9
		r.sv.beforeRespawn = func(name string) {
			if err := r.l.Start(name); err != nil { // pm send starts it meanwhile
				t.Error(err)
			}
		}
		r.sv.respawn(a.Name)
		if n := len(r.fake.Running()); n != 1 {
			t.Fatalf("trial %d: %d hosts running, want 1", i, n)
		}
		got := r.agent(t, a.Name)
		if !r.fake.Alive(got.Handle) {
			t.Fatalf("trial %d: the recorded host %+v is not the live one", i, got.Handle)
		}
		cancel()
	}
}
