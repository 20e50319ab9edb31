package render

import (
	"io"
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
	widths := t.widths(rows)
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			c = Fit(c, widths[i])
			b.WriteString(c)
			if i < len(r)-1 {
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

// widths are the columns' natural widths, the widest cut down one column
// at a time until a row fits t.Width.
func (t *Table) widths(rows [][]string) []int {
	widths := make([]int, len(t.Header))
	floor := make([]int, len(t.Header))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for i, h := range t.Header {
		floor[i] = min(widths[i], max(minCut, utf8.RuneCountInString(h)))
	}
	if t.Wide || t.Width <= 0 {
		return widths
	}
	total := gap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	for total > t.Width {
		widest := -1
		for i, w := range widths {
			if w > floor[i] && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break // every column at its floor: the terminal is too narrow
		}
		widths[widest]--
		total--
	}
	return widths
}
