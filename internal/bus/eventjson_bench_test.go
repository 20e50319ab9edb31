package bus

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"
)

// sayEvent is the event every pm say publishes.
func sayEvent() Event {
	return Event{Time: time.Date(2026, 11, 25, 13, 0, 0, 5, time.UTC), Kind: EvMessage, Actor: "oak_a1b2", TaskID: "tk-a1b2c3",
		PhaseID: "ph-a1b2c3", MsgID: "msg-a1b2c3", Text: "one more", Data: MessagePosted{N: 11, Limit: 50}}
}

// The first encoding of a say's event in a fresh process, as a short
// command pays it: Event.MarshalJSON against encoding/json alone
// (reference), best and median of 15 processes each, interleaved. What
// the codec is kept for (docs/benchmarks.md, issue 22); the test fails only
// if the codec allocates as much as encoding/json, never on time.
func TestMarshalFreshProcess(t *testing.T) {
	if mode := os.Getenv("PM_TEST_MARSHAL_HELPER"); mode != "" {
		marshalHelper(mode)
		return
	}
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	type figures struct{ mallocs, ns uint64 }
	runs := map[string][]figures{}
	for range 15 {
		for _, mode := range []string{"codec", "json"} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMarshalFreshProcess$")
			cmd.Env = append(os.Environ(), "PM_TEST_MARSHAL_HELPER="+mode)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper %s: %v\n%s", mode, err, out)
			}
			var f figures
			if _, err := fmt.Sscanf(string(out), "%d %d", &f.mallocs, &f.ns); err != nil {
				t.Fatalf("helper %s: %q: %v", mode, out, err)
			}
			runs[mode] = append(runs[mode], f)
		}
	}
	summary := func(mode string) (uint64, float64, float64) {
		ns := make([]uint64, 0, len(runs[mode]))
		for _, f := range runs[mode] {
			ns = append(ns, f.ns)
		}
		slices.Sort(ns)
		return runs[mode][0].mallocs, float64(ns[0]) / 1e3, float64(ns[len(ns)/2]) / 1e3
	}
	cm, cb, cmed := summary("codec")
	jm, jb, jmed := summary("json")
	t.Logf("a say's event, first encoding in a fresh process: codec %d allocs, best %.0f µs, median %.0f µs; encoding/json %d allocs, best %.0f µs, median %.0f µs",
		cm, cb, cmed, jm, jb, jmed)
	if cm >= jm {
		t.Errorf("the codec allocates %d times, encoding/json %d", cm, jm)
	}
}

// marshalHelper encodes a say's event once and prints the allocations and
// the time it took.
func marshalHelper(mode string) {
	ev := sayEvent()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var err error
	if mode == "codec" {
		_, err = ev.MarshalJSON()
	} else {
		_, err = reference(ev)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		panic(err)
	}
	fmt.Println(after.Mallocs-before.Mallocs, took.Nanoseconds())
	os.Exit(0)
}

// Steady state: both encoders warm.
func BenchmarkMarshalEvent(b *testing.B) {
	ev := sayEvent()
	b.Run("codec", func(b *testing.B) {
		for b.Loop() {
			if _, err := ev.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			if _, err := reference(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
