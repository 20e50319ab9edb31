package prog

import "testing"

func TestMax(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want int
	}{{[]int{3}, 3}, {[]int{1, 9, 2}, 9}, {[]int{-4, -2, -7}, -2}} {
		if got := Max(c.in); got != c.want {
			t.Errorf("Max(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}
