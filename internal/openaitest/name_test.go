package openaitest

import (
	"regexp"
	"strings"
	"testing"
)

// validFunctionName replaces the API's pattern with a loop; it must agree
// with the pattern on every case.
func TestValidFunctionName(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, name := range []string{
		"", "a", "read_file", "read-file", "Read9", "read file", "read.file", "é",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n", "\x00", "tool/x",
	} {
		if got, want := validFunctionName(name), pattern.MatchString(name); got != want {
			t.Errorf("validFunctionName(%q) = %v, want %v", name, got, want)
		}
	}
}
