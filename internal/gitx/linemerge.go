package gitx

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// lineHunk replaces base lines [start, end) with lines.
type lineHunk struct {
	start, end int
	lines      []string
	side       int // 0 ours, 1 theirs
}

// mergeLines is a three-way merge of text by lines, as diff3 does: the
// hunks ours and theirs make to base apply together when they touch
// different lines; hunks that overlap or touch (adjacent lines, or
// insertions at the same place) conflict unless they are the same change.
// ok is false on a conflict, or when any side looks binary (a NUL byte).
func mergeLines(base, ours, theirs []byte) (_ []byte, ok bool) {
	out, clean, _ := mergeLinesMarked(base, ours, theirs, [2]string{}, FavorNone)
	return out, clean
}

// mergeLinesMarked is mergeLines that, given labels (mark[0] ours,
// mark[1] theirs), writes a conflict as git does: "<<<<<<< ours", our
// lines, "=======", their lines, ">>>>>>> theirs"; clean is false when it
// wrote one. With a favor instead, a conflicting group takes that side's
// lines and the merge is clean: only the lines in conflict are settled,
// every other hunk of both sides applies (git's -X ours/theirs). text is
// false for binary content (then out is nil).
func mergeLinesMarked(base, ours, theirs []byte, mark [2]string, favor Favor) (out []byte, clean, text bool) {
	for _, b := range [][]byte{base, ours, theirs} {
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			return nil, false, false
		}
	}
	codes := map[string]rune{}
	bl, bs, ok1 := encodeLines(string(base), codes)
	_, os_, ok2 := encodeLines(string(ours), codes)
	_, ts, ok3 := encodeLines(string(theirs), codes)
	if !ok1 || !ok2 || !ok3 {
		return nil, false, false
	}
	texts := map[rune]string{}
	for l, r := range codes {
		texts[r] = l
	}
	hs := append(hunks(bs, os_, texts, 0), hunks(bs, ts, texts, 1)...)
	sortHunks(hs)
	var b strings.Builder
	clean = true
	at := 0
	for i := 0; i < len(hs); {
		// A group: hunks that overlap or touch each other.
		j, end := i+1, hs[i].end
		for j < len(hs) && hs[j].start <= end { // touching hunks conflict, as in git
			end = max(end, hs[j].end)
			j++
		}
		group := hs[i:j]
		pick, ok := resolveGroup(group, bl)
		switch {
		case !ok && favor == FavorOurs:
			pick, ok = applySide(group, bl, 0, group[0].start, end), true
		case !ok && favor == FavorTheirs:
			pick, ok = applySide(group, bl, 1, group[0].start, end), true
		case !ok && mark[0] == "":
			return nil, false, true
		}
		for _, l := range bl[at:group[0].start] {
			b.WriteString(l)
		}
		if !ok {
			clean = false
			pick = markConflict(group, bl, mark)
		}
		for _, l := range pick {
			b.WriteString(l)
		}
		at = end
		i = j
	}
	for _, l := range bl[at:] {
		b.WriteString(l)
	}
	return []byte(b.String()), clean, true
}

// markConflict is a conflicting group written with git's markers.
func markConflict(group []lineHunk, base []string, mark [2]string) []string {
	start, end := group[0].start, group[0].end
	for _, h := range group {
		end = max(end, h.end)
	}
	out := []string{"<<<<<<< " + mark[0] + "\n"}
	for _, l := range applySide(group, base, 0, start, end) {
		out = append(out, withNewline(l))
	}
	out = append(out, "=======\n")
	for _, l := range applySide(group, base, 1, start, end) {
		out = append(out, withNewline(l))
	}
	return append(out, ">>>>>>> "+mark[1]+"\n")
}

// applySide is base lines [start, end) with one side's hunks of group.
func applySide(group []lineHunk, base []string, side, start, end int) []string {
	var out []string
	at := start
	for _, h := range group {
		if h.side != side {
			continue
		}
		out = append(out, base[at:h.start]...)
		out = append(out, h.lines...)
		at = h.end
	}
	return append(out, base[at:end]...)
}

func withNewline(l string) string {
	if strings.HasSuffix(l, "\n") {
		return l
	}
	return l + "\n"
}

// resolveGroup is what a group of hunks over the same base lines becomes:
// one side's hunks alone apply; both sides' must make the same text.
func resolveGroup(group []lineHunk, base []string) ([]string, bool) {
	start, end := group[0].start, group[0].end
	sides := [2]bool{}
	for _, h := range group {
		end = max(end, h.end)
		sides[h.side] = true
	}
	apply := func(side int) []string { return applySide(group, base, side, start, end) }
	if !sides[1] {
		return apply(0), true
	}
	if !sides[0] {
		return apply(1), true
	}
	a, b := apply(0), apply(1)
	if strings.Join(a, "") != strings.Join(b, "") {
		return nil, false
	}
	return a, true
}

// sortHunks orders hunks by start, then end (insertions first).
func sortHunks(hs []lineHunk) {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && (hs[j].start < hs[j-1].start || hs[j].start == hs[j-1].start && hs[j].end < hs[j-1].end); j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

// encodeLines splits s into lines (each with its "\n") and encodes each
// distinct line as one rune, so a diff of the runes is a diff of lines.
// ok is false past the runes there are (a million distinct lines).
func encodeLines(s string, codes map[string]rune) (lines []string, enc string, ok bool) {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		l := s
		if i >= 0 {
			l = s[:i+1]
		}
		s = s[len(l):]
		r, seen := codes[l]
		if !seen {
			r = rune(0xE000 + len(codes))
			if r >= 0xF900 {
				r += 0x10000 - 0xF900 // past the private use area, into the supplementary planes
			}
			if r > utf8.MaxRune {
				return nil, "", false
			}
			codes[l] = r
		}
		lines = append(lines, l)
		b.WriteRune(r)
	}
	return lines, b.String(), true
}

// hunks is the line diff from base to other (both encoded) as hunks.
func hunks(base, other string, text map[rune]string, side int) []lineHunk {
	// Rune index of every byte offset of base.
	idx := make([]int, len(base)+1)
	n := 0
	for off := range base {
		idx[off] = n
		n++
	}
	idx[len(base)] = n
	var out []lineHunk
	for _, e := range udiff.Strings(base, other) {
		h := lineHunk{start: idx[e.Start], end: idx[e.End], side: side}
		for _, r := range e.New {
			h.lines = append(h.lines, text[r])
		}
		out = append(out, h)
	}
	return out
}
