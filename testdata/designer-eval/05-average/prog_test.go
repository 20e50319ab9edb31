package prog

import "testing"

func TestAverage(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want float64
	}{{nil, 0}, {[]int{2, 4}, 3}, {[]int{1, 2}, 1.5}} {
		if got := Average(c.in); got != c.want {
			t.Errorf("Average(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
