package state

import "testing"

// Free counts each agent once, however many of the worker's lists (and
// the placements not listed yet) name it.
func TestWorkerFree(t *testing.T) {
	for _, c := range []struct {
		name   string
		w      Worker
		placed []string
		want   int
	}{
		{"empty", Worker{Capacity: 2}, nil, 2},
		{"running and waiting", Worker{Capacity: 2, Running: []string{"a"}, Waiting: []string{"b", "c"}}, nil, -1},
		{"a start listed as taking and placed", Worker{Capacity: 2, Taking: []string{"a"}}, []string{"a"}, 1},
		{"placed, not listed yet", Worker{Capacity: 3, Running: []string{"a"}}, []string{"b", "c"}, 0},
		{"placed twice", Worker{Capacity: 3}, []string{"b", "b"}, 2},
	} {
		if got := c.w.Free(c.placed...); got != c.want {
			t.Errorf("%s: Free = %d, want %d", c.name, got, c.want)
		}
	}
}
