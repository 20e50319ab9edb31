package render

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Table is a plain-text table that fits a terminal: the widest columns are
// cut with "…" until the row fits Width (Width <= 0, as off a terminal, or
// Wide: every cell whole). Cells are made safe with Line: records can be
// hand-edited and some columns are written by agents.
type Table struct {
	Header []string
	Rows   [][]string
	Width  int  // the terminal's columns; 0: no limit
	Wide   bool // never cut (--wide)
	// Whole are columns (indexes) never cut: ids a person types.
	Whole []int
	// Drop are the columns (indexes, the first dropped first) left out
	// whole while a row would not fit Width even with every column cut to
	// its floor: a column cut to nothing says nothing. Dropped names them
	// after Write, for a note (--wide shows every column).
	Drop    []int
	Dropped []string
}

// gap is the space between two columns.
const gap = 2

// minCut is the narrowest a column is cut to (or its header, if wider).
const minCut = 6

// Add appends a row of cells.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Write prints the header and the rows, columns padded to one width each.
func (t *Table) Write(w io.Writer) error {
	rows := make([][]string, 0, len(t.Rows)+1)
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		safe := make([]string, len(t.Header))
		for i := range safe {
			if i < len(r) {
				safe[i] = Line(r[i])
			}
		}
		rows = append(rows, safe)
	}
	widths, floor := t.columnWidths(rows)
	keep := t.dropColumns(rows, floor)
	t.cut(widths, floor, keep)
	var b strings.Builder
	for _, r := range rows {
		for j, i := range keep {
			c := Fit(r[i], widths[i])
			b.WriteString(c)
			if j < len(keep)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+gap))
			}
		}
		line := strings.TrimRight(b.String(), " ")
		b.Reset()
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// columnWidths are each column's natural width and the narrowest it may
// be cut to (rows[0] is the header).
func (t *Table) columnWidths(rows [][]string) (widths, floor []int) {
	widths, floor = make([]int, len(t.Header)), make([]int, len(t.Header))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for i := range t.Header {
		floor[i] = min(widths[i], max(minCut, utf8.RuneCountInString(rows[0][i])))
		if slices.Contains(t.Whole, i) {
			floor[i] = widths[i]
		}
	}
	return widths, floor
}

// dropColumns is the columns shown: all but t.Drop's, left out in order
// while the kept ones at their floors are wider than t.Width.
func (t *Table) dropColumns(rows [][]string, floor []int) []int {
	t.Dropped = nil
	keep := make([]int, len(t.Header))
	for i := range keep {
		keep[i] = i
	}
	if t.Wide || t.Width <= 0 {
		return keep
	}
	for _, d := range t.Drop {
		if total(floor, keep) <= t.Width || !slices.Contains(keep, d) {
			break
		}
		keep = slices.DeleteFunc(keep, func(i int) bool { return i == d })
		t.Dropped = append(t.Dropped, rows[0][d])
	}
	return keep
}

// total is the width of a row of the kept columns at widths.
func total(widths, keep []int) int {
	n := gap * (len(keep) - 1)
	for _, i := range keep {
		n += widths[i]
	}
	return n
}

// cut narrows the widest kept column one rune at a time until a row fits
// t.Width, no column below its floor.
func (t *Table) cut(widths, floor, keep []int) {
	if t.Wide || t.Width <= 0 {
		return
	}
	for n := total(widths, keep); n > t.Width; n-- {
		widest := -1
		for _, i := range keep {
			if widths[i] > floor[i] && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return // every column at its floor: the terminal is too narrow
		}
		widths[widest]--
	}
}
