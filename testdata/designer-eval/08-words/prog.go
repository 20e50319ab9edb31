package prog

import "strings"

// CountWords returns how many whitespace-separated words s has.
func CountWords(s string) int {
	if s == "" {
		return 0
	}
	return len(strings.Split(s, " "))
}
