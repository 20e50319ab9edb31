package prog

// Average returns the arithmetic mean of xs as a float64, and 0 for an empty xs.
func Average(xs []int) float64 {
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return float64(sum / len(xs))
}
