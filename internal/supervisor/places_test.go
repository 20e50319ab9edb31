package supervisor

import (
	"slices"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/driver"
)

// What a worker says it holds (its registration, which placement by free
// capacity reads) is what it counts when it reserves a place: a respawn
// due holds one too. Before, the registration left it out, so placement
// saw a free place the worker then refused. Each case says which agents
// the registration lists, and a new start is refused exactly when the
// registration has no free place.
func TestWorkerSaysTheRespawnsItHolds(t *testing.T) {
	for _, tc := range []struct {
		name                string
		watching, pending   []string
		claiming            []string // keys: "start NAME" or "NAME"
		wantRun, wantTaking []string
	}{
		{name: "a respawn due holds a place",
			pending: []string{"crashed_0001"}, claiming: []string{"start placed_0002", "gone_0003"},
			wantTaking: []string{"crashed_0001", "gone_0003", "placed_0002"}},
		{name: "a running agent's respawn or start takes no second place",
			watching: []string{"live_0001"}, pending: []string{"live_0001"}, claiming: []string{"start live_0001"},
			wantRun: []string{"live_0001"}},
		{name: "a claim handing on to its start is one place",
			claiming: []string{"moved_0001", "start moved_0001"}, wantTaking: []string{"moved_0001"}},
		{name: "two running, one respawn",
			watching: []string{"a_0001", "b_0002"}, pending: []string{"c_0003"},
			wantRun: []string{"a_0001", "b_0002"}, wantTaking: []string{"c_0003"}},
		{name: "nothing held"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const capacity = 3
			sv := &Supervisor{Worker: "w1", capacity: capacity,
				watching: map[string]driver.Handle{}, pending: map[string]*time.Timer{}, claiming: map[string]bool{}}
			for _, n := range tc.watching {
				sv.watching[n] = driver.Handle{}
			}
			for _, n := range tc.pending {
				sv.pending[n] = nil
			}
			for _, k := range tc.claiming {
				sv.claiming[k] = true
			}
			w := sv.workerSays(capacity)
			if !slices.Equal(w.Running, tc.wantRun) || !slices.Equal(w.Taking, tc.wantTaking) {
				t.Fatalf("registration running %q taking %q, want %q and %q", w.Running, w.Taking, tc.wantRun, tc.wantTaking)
			}
			ok, full := sv.reserve("start new_9999")
			if full != (w.Free() == 0) || ok == full {
				t.Fatalf("a new start: reserved %v, full %v; the registration says %d free", ok, full, w.Free())
			}
		})
	}
}
