package prog

// Sum returns the sum of all the numbers in xs (0 for none).
func Sum(xs []int) int {
	total := 0
	for i := 1; i < len(xs); i++ {
		total += xs[i]
	}
	return total
}
