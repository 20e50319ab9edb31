package prog

// Contains reports whether x is one of the elements of xs.
func Contains(xs []string, x string) bool {
	for i := 0; i < len(xs)-1; i++ {
		if xs[i] == x {
			return true
		}
	}
	return false
}
