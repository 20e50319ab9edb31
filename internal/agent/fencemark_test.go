package agent

import (
	"strings"
	"testing"
)

// An agent's first word reaches the hub's fence stream bounded, valid and
// printable: no control character (a terminal escape, a newline) in it.
func TestFenceMark(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "pm"},
		{[]string{"say", "hi"}, "pm say"},
		{[]string{"say\x1b[2J\nDONE"}, "pm say[2JDONE"},
		{[]string{strings.Repeat("x", 100)}, "pm " + strings.Repeat("x", 64)},
		{[]string{"\xff\xfeok"}, "pm ok"},
	} {
		if got := fenceMark(tc.args); got != tc.want {
			t.Errorf("fenceMark(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
