package prog

// Max returns the largest number in a non-empty xs, negative numbers included.
func Max(xs []int) int {
	best := 0
	for _, x := range xs {
		if x > best {
			best = x
		}
	}
	return best
}
