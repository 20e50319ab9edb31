package prog

import "testing"

func TestSearch(t *testing.T) {
	xs := []int{1, 3, 5, 7, 9}
	for target, want := range map[int]int{1: 0, 5: 2, 9: 4, 4: -1, 10: -1} {
		if got := Search(xs, target); got != want {
			t.Errorf("Search(%v, %d) = %d, want %d", xs, target, got, want)
		}
	}
	if got := Search(nil, 1); got != -1 {
		t.Errorf("Search(nil, 1) = %d", got)
	}
}
