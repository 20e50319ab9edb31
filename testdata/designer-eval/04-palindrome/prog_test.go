package prog

import "testing"

func TestIsPalindrome(t *testing.T) {
	for in, want := range map[string]bool{"": true, "a": true, "abba": true, "abca": false, "racecar": true} {
		if got := IsPalindrome(in); got != want {
			t.Errorf("IsPalindrome(%q) = %v, want %v", in, got, want)
		}
	}
}
