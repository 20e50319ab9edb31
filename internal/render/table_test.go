package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTableFits(t *testing.T) {
	long := strings.Repeat("a long description ", 12)
	mk := func(width int, wide bool) *Table {
		tb := &Table{Header: []string{"NAME", "STATE", "DESCRIPTION"}, Width: width, Wide: wide}
		tb.Add("greeter", "idle", long)
		tb.Add("reader", "working", "short")
		return tb
	}
	tests := []struct {
		name    string
		table   *Table
		maxLine int // 0: no bound
		cut     bool
	}{
		{"off a terminal every cell is whole", mk(0, false), 0, false},
		{"fits 80 columns", mk(80, false), 80, true},
		{"fits 40 columns", mk(40, false), 40, true},
		{"wide keeps every cell", mk(80, true), 0, false},
		{"wide enough: nothing cut", mk(400, false), 400, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := tt.table.Write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if n := utf8.RuneCountInString(l); tt.maxLine > 0 && n > tt.maxLine {
					t.Errorf("line of %d columns over %d: %q", n, tt.maxLine, l)
				}
			}
			if got := strings.Contains(out, "…"); got != tt.cut {
				t.Errorf("cut %v, want %v:\n%s", got, tt.cut, out)
			}
			if !strings.Contains(out, "greeter") || !strings.Contains(out, "working") {
				t.Errorf("a narrow column was cut:\n%s", out)
			}
		})
	}
}

func TestTableAlignsAndEscapes(t *testing.T) {
	tb := &Table{Header: []string{"A", "B"}}
	tb.Add("x\x1b[31m", "1")
	tb.Add("longer", "2")
	var b strings.Builder
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("a control character reached the table: %q", b.String())
	}
	if i, j := strings.LastIndex(lines[1], "1"), strings.LastIndex(lines[2], "2"); i != j {
		t.Errorf("columns not aligned: %q", b.String())
	}
}
