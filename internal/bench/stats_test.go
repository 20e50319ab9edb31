package bench

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/store"
)

func TestPercentile(t *testing.T) {
	var d Durations
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {99, 99}, {100, 100}, {0, 1}, {90, 90}} {
		if got := d.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if (Durations{}).Median() != 0 {
		t.Error("empty sample")
	}
}

func TestGenerate(t *testing.T) {
	st, err := Generate(t.TempDir(), StateSpec{Tasks: 150, Events: 100, MessagesPerPhase: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(st.Root)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := s.Tasks()
	if err != nil || len(tasks) != 150 {
		t.Fatalf("%d tasks, %v", len(tasks), err)
	}
	active := 0
	for _, tk := range tasks {
		if tk.Live() {
			active++
		}
	}
	if active != 1 {
		t.Errorf("%d live tasks, want 1", active)
	}
	ph, err := s.ActivePhase(st.ActiveTask)
	if err != nil || ph == nil || ph.ID != st.ActivePhase {
		t.Fatalf("active phase %v, %v", ph, err)
	}
	if a, err := s.Agent(st.Owner); err != nil || a.TaskID != st.ActiveTask {
		t.Fatalf("owner %v, %v", a, err)
	}
	if n, err := jsonl.Count(filepath.Join(st.Root, "events.jsonl")); err != nil || n != 100 {
		t.Fatalf("%d events, %v", n, err)
	}
	if n, err := jsonl.Count(s.MessagesPath(st.ActiveTask, st.ActivePhase)); err != nil || n != 3 {
		t.Fatalf("%d messages, %v", n, err)
	}
}
