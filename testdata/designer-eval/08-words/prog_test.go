package prog

import "testing"

func TestCountWords(t *testing.T) {
	for in, want := range map[string]int{"": 0, "one": 1, "two words": 2, "  spaced   out  ": 2, "tab\tsep": 2} {
		if got := CountWords(in); got != want {
			t.Errorf("CountWords(%q) = %d, want %d", in, got, want)
		}
	}
}
