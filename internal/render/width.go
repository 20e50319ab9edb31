package render

import (
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Width is the terminal's width in columns when w is a terminal, else 0:
// pipes and files get whole lines, a person's terminal gets lines that fit.
func Width(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}

// Fit cuts s to at most width runes, ending with "…" when cut; width <= 0
// leaves s whole. (A rune stands for one column: close enough for ids and
// prose, and never longer than the line it came from.)
func Fit(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	if width == 1 {
		return "…"
	}
	n := 0
	for i := range s {
		if n == width-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// FitTail fits the last field of a line whose first prefix runes are
// already taken, keeping at least a few runes of it.
func FitTail(prefix, s string, width int) string {
	if width <= 0 {
		return s
	}
	return Fit(s, max(width-utf8.RuneCountInString(prefix), 8))
}
