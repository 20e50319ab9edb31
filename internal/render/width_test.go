package render

import (
	"bytes"
	"testing"
)

func TestFit(t *testing.T) {
	cases := []struct {
		s     string
		width int
		want  string
	}{
		{"hello", 0, "hello"},
		{"hello", 5, "hello"},
		{"hello world", 6, "hello…"},
		{"héllo wörld", 4, "hél…"},
		{"abc", 1, "…"},
	}
	for _, c := range cases {
		if got := Fit(c.s, c.width); got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
	if Width(&bytes.Buffer{}) != 0 {
		t.Error("a buffer has no width")
	}
	if got := FitTail("0123456789", "a long description here", 20); got != "a long de…" {
		t.Errorf("FitTail = %q", got)
	}
}
