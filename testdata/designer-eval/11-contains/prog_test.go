package prog

import "testing"

func TestContains(t *testing.T) {
	xs := []string{"a", "b", "c"}
	for x, want := range map[string]bool{"a": true, "c": true, "d": false} {
		if got := Contains(xs, x); got != want {
			t.Errorf("Contains(%v, %q) = %v, want %v", xs, x, got, want)
		}
	}
}
