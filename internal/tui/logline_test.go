package tui

import (
	"strings"
	"testing"
	"time"
)

func TestCascadeLines(t *testing.T) {
	c := newCascade()
	var got []string
	for _, ev := range cascadeEvents() {
		if l, ok := c.Line(ev); ok {
			got = append(got, l.Format(time.UTC))
		}
	}
	want := []string{
		"14:23:01  human → coord: help me understand this codebase",
		"14:23:02    coord → reader: list the files in root",
		`14:23:02      reader → list_files: {"path":"."}`,
		`14:23:02      list_files → reader: README.md\nlib/\nspec/`,
		"14:23:03    reader → coord: Found: README.md, lib/, spec/",
		`14:23:04    coord → create_capability: {"name":"spec_writer"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLogLineEscapes(t *testing.T) {
	l := LogLine{Time: t0, From: "reader", To: "human", Text: "\x1b[2Jgone"}
	if got := l.Format(time.UTC); got != `14:23:01  reader → human: \x1b[2Jgone` {
		t.Fatalf("got %q", got)
	}
}

func TestUseTUI(t *testing.T) {
	env := func(term string) func(string) string { return func(string) string { return term } }
	for _, tc := range []struct {
		name  string
		term  string
		plain bool
	}{{"not a terminal", "xterm", false}, {"plain", "xterm", true}, {"dumb", "dumb", false}} {
		if UseTUI(strings.NewReader(""), &strings.Builder{}, env(tc.term), tc.plain) {
			t.Errorf("%s: TUI chosen, want line mode", tc.name)
		}
	}
}
