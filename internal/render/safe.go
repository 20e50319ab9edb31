package render

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Terminal makes agent-written text safe to print on a human's terminal:
// every control character and escape sequence is shown visibly escaped
// instead of being sent raw, so an agent cannot move the cursor, retitle
// the window, hide text or ring the bell. Newlines and tabs stay, as the
// layouts indent on them. Escaped, in Go syntax:
//   - ESC and every other C0 control but \n and \t, and DEL: \x1b, \x7f;
//   - C1 controls (U+0080..U+009F, which some terminals obey as CSI, OSC):
//     \u009b;
//   - bidirectional overrides and isolates, which reorder what is shown
//     (U+202A..U+202E, U+2066..U+2069): \u202e;
//   - every byte that is not valid UTF-8: \xff.
//
// The stored text is untouched: --json prints it exactly.
func Terminal[S ~string](s S) string { return escape(string(s), false) }

// Line is Terminal for a one-line field (a description, a name in a table):
// newlines and tabs are escaped too (\n, \t) so the field cannot break the
// layout.
func Line[S ~string](s S) string { return escape(string(s), true) }

func escape(s string, oneLine bool) string {
	if isPlain(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !oneLine && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s needs no escaping: printable ASCII (with \n and
// \t unless oneLine) only. Anything else takes the slow path.
func isPlain(s string, oneLine bool) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			// Eight bytes at a time: no byte < 0x20, none >= 0x7f.
			w := s[i : i+8]
			x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
			if ((x-ones*0x20)&^x|(x&^highs+ones)|x)&highs == 0 {
				i += 8
				continue
			}
		}
		if c := s[i]; !(c >= 0x20 && c < 0x7f || !oneLine && (c == '\n' || c == '\t')) {
			return false
		}
		i++
	}
	return true
}
