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

// Whole columns are never cut; Drop's columns are left out, in order, only
// while the rest would not fit at their floors, and Dropped names them.
func TestTableWholeAndDrop(t *testing.T) {
	mk := func(width int) *Table {
		tb := &Table{Header: []string{"ID", "NOTE", "EXTRA", "MORE"}, Width: width, Whole: []int{0}, Drop: []int{3, 2}}
		tb.Add("tk-a1b2c3", strings.Repeat("n", 40), strings.Repeat("e", 20), strings.Repeat("m", 20))
		return tb
	}
	for _, tt := range []struct {
		width   int
		dropped string
	}{{0, ""}, {200, ""}, {40, ""}, {30, "MORE"}, {20, "MORE, EXTRA"}} {
		var b strings.Builder
		tb := mk(tt.width)
		if err := tb.Write(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if got := strings.Join(tb.Dropped, ", "); got != tt.dropped || !strings.Contains(out, "tk-a1b2c3") {
			t.Errorf("width %d: dropped %q, want %q:\n%s", tt.width, got, tt.dropped, out)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if tt.width > 0 && utf8.RuneCountInString(l) > tt.width {
				t.Errorf("width %d: line %q", tt.width, l)
			}
		}
	}
}
