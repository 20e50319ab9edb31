package supervisor

import (
	"slices"
	"testing"
	"time"
)

// What a worker says it holds (its registration, which placement by free
// capacity reads) is what it counts when it reserves a place: a respawn
// due holds one too. Before, the registration left it out, so placement
// saw a free place the worker then refused.
func TestWorkerSaysTheRespawnsItHolds(t *testing.T) {
	sv := &Supervisor{Worker: "w1",
		pending:  map[string]*time.Timer{"crashed_0001": nil},
		claiming: map[string]bool{"start placed_0002": true, "gone_0003": true},
	}
	w := sv.workerSays(3)
	if got := sv.placesTakenLocked(); got != len(w.Running)+len(w.Taking) {
		t.Errorf("places taken %d, the registration says %d running + %d taking (%v)", got, len(w.Running), len(w.Taking), w.Taking)
	}
	if !slices.Contains(w.Taking, "crashed_0001") || w.Free() != 0 {
		t.Errorf("registration %+v (free %d): a respawn due holds a place", w, w.Free())
	}
}
