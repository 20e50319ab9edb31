package store

import (
	"bytes"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// The scanner of Message.DecodeLine: each function scans one piece of JSON
// at raw[i], validating it as strictly as encoding/json's scanner, and
// returns the index after it; ok false means "not handled" (invalid, or a
// shape the fast path leaves to encoding/json).

// skipSpace returns the index of the first byte from i on that is not JSON
// white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// An object, as every decoder here walks it (no callback, so the hot
// decoder of message lines pays no indirect call per member):
//
//	i, end, ok := objectStart(raw, i)
//	for ok && !end {
//		// scan the member whose key starts at raw[i]: key, memberValue, value
//		i, end, ok = memberEnd(raw, i)
//	}

// objectStart scans the "{" at raw[i] and the space after it: next is the
// first member's key, or, with end, the index after an empty object.
func objectStart(raw []byte, i int) (next int, end, ok bool) {
	if i >= len(raw) || raw[i] != '{' {
		return 0, false, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return i + 1, true, true
	}
	return i, false, true
}

// memberEnd scans what follows a member's value at raw[i]: a comma (next
// is the next member's key) or the object's "}" (end; next is after it).
func memberEnd(raw []byte, i int) (next int, end, ok bool) {
	i = skipSpace(raw, i)
	if i < len(raw) && raw[i] == ',' {
		return skipSpace(raw, i+1), false, true
	}
	if i < len(raw) && raw[i] == '}' {
		return i + 1, true, true
	}
	return 0, false, false
}

// memberValue is the index of a member's value, its key ending before
// raw[i]: white space, a colon, white space.
func memberValue(raw []byte, i int) (next int, ok bool) {
	i = skipSpace(raw, i)
	if i == len(raw) || raw[i] != ':' {
		return 0, false
	}
	return skipSpace(raw, i+1), true
}

// skipScalar scans a string, a number, true, false or null at raw[i] and
// returns the index after it; an object or an array is not handled.
func skipScalar(raw []byte, i int) (next int, ok bool) {
	if i == len(raw) {
		return 0, false
	}
	switch c := raw[i]; {
	case c == '"':
		end, _, _, ok := scanString(raw, i+1)
		return end + 1, ok
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(raw, i)
	case c == 't':
		return word(raw, i, "true")
	case c == 'f':
		return word(raw, i, "false")
	case c == 'n':
		return word(raw, i, "null")
	}
	return 0, false
}

func word(raw []byte, i int, w string) (next int, ok bool) {
	if len(raw)-i < len(w) || string(raw[i:i+len(w)]) != w {
		return 0, false
	}
	return i + len(w), true
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at raw[i].
func scanNumber(raw []byte, i int) (next int, ok bool) {
	if raw[i] == '-' {
		i++
	}
	if i < len(raw) && raw[i] == '0' {
		i++
	} else if i, ok = digits(raw, i); !ok {
		return 0, false
	}
	if i < len(raw) && raw[i] == '.' {
		if i, ok = digits(raw, i+1); !ok {
			return 0, false
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		return digits(raw, i)
	}
	return i, true
}

// digits scans one or more decimal digits at raw[i].
func digits(raw []byte, i int) (next int, ok bool) {
	start := i
	for i < len(raw) && '0' <= raw[i] && raw[i] <= '9' {
		i++
	}
	return i, i > start
}

// scanString scans a string's body from raw[i] (after its opening quote),
// validating its escapes as encoding/json's scanner does, and returns the
// index of its closing quote.
func scanString(raw []byte, i int) (end int, escaped, nonASCII, ok bool) {
	var st stringScan
	end, ok = st.scan(raw, i, nil)
	return end, st.escaped, st.nonASCII, ok
}

// stringScan is what scanning a string's body found: escapes, bytes from
// 0x80 up, a raw DEL (0x7f), and, when the body was unescaped as it was
// scanned, the TextClass of the characters its escapes stand for.
type stringScan struct {
	escaped, nonASCII, del bool
	class                  TextClass
}

// scan is scanString; with dst, the body is also unescaped, in the same
// pass, and appended to *dst, once it has an escape (a body without one is
// not copied: it is raw[i:end]). Unescaping refuses (ok false) a surrogate
// escape, which encoding/json pairs or replaces.
func (st *stringScan) scan(raw []byte, i int, dst *[]byte) (end int, ok bool) {
	run := i // the body's bytes from run on are not in *dst yet
	for {
		i = plainRun(raw, i)
		if i == len(raw) {
			return 0, false
		}
		switch c := raw[i]; {
		case c == '"':
			if dst != nil && st.escaped {
				*dst = append(*dst, raw[run:i]...)
			}
			return i, true
		case c == '\\':
			st.escaped = true
			next, ok := scanEscape(raw, i)
			if !ok {
				return 0, false
			}
			if dst != nil {
				var class TextClass
				if *dst, class, ok = appendEscape(append(*dst, raw[run:i]...), raw[i:next]); !ok {
					return 0, false
				}
				st.class |= class
				run = next
			}
			i = next
		case c < 0x20:
			return 0, false
		case c == 0x7f:
			st.del = true
			i++
		default:
			st.nonASCII = true
			i++
		}
	}
}

// plainRun returns the index of the first byte from i on that ends a run
// of plain string bytes (printable ASCII but '"' and '\\': not DEL), or
// len(b). It tests eight bytes at a time: the string bytes are most of a
// line.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		q, bs := x^(ones*'"'), x^(ones*'\\')
		// A byte's high bit is set in special iff it is < 0x20, '"', '\\'
		// or >= 0x7f; borrows only flag bytes above a special one, so the
		// lowest flagged byte is the first special one.
		special := (x-ones*0x20)&^x | (q-ones)&^q | (bs-ones)&^bs | x | (x&^highs + ones)
		if special&highs != 0 {
			return i + bits.TrailingZeros64(special&highs)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// scanEscape scans one escape sequence from its backslash at raw[i].
func scanEscape(raw []byte, i int) (next int, ok bool) {
	if i+1 >= len(raw) {
		return 0, false
	}
	switch raw[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, true
	case 'u':
		_, ok := hex4(raw[i+2:])
		return i + 6, ok
	}
	return 0, false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescape decodes the escapes of a string body the scanner validated.
func unescape(b []byte) (string, bool) {
	out, _, ok := appendUnescaped(make([]byte, 0, len(b)), b)
	if !ok || len(out) == 0 {
		return "", ok
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), true // out is not kept
}

// appendUnescaped appends the string body b (validated by the scanner),
// its escapes decoded, to dst (appendEscape).
func appendUnescaped(dst, b []byte) (out []byte, class TextClass, ok bool) {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return append(dst, b[i:]...), class, true
		}
		dst = append(dst, b[i:i+j]...)
		i += j
		n := 2
		if b[i+1] == 'u' {
			n = 6
		}
		var more TextClass
		if dst, more, ok = appendEscape(dst, b[i:i+n]); !ok {
			return dst, 0, false
		}
		class |= more
		i += n
	}
	return dst, class, true
}

// appendEscape appends the character of one escape sequence (validated by
// the scanner) to dst, and reports its class: TextBreaks for \n and \t,
// TextControl for another control character or DEL, TextNonASCII from
// U+0080 up. It reports false for a surrogate escape, which encoding/json
// pairs or replaces.
func appendEscape(dst, esc []byte) ([]byte, TextClass, bool) {
	c := esc[1]
	switch c {
	case 'u':
		r, _ := hex4(esc[2:])
		if 0xd800 <= r && r < 0xe000 {
			return dst, 0, false
		}
		if r < utf8.RuneSelf {
			return append(dst, byte(r)), runeClass(r), true
		}
		return utf8.AppendRune(dst, r), TextNonASCII, true
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	default: // '"', '\\', '/'
	}
	return append(dst, c), runeClass(rune(c)), true
}

// runeClass is the TextClass of one character.
func runeClass(r rune) TextClass {
	switch {
	case r == '\n' || r == '\t':
		return TextBreaks
	case r < 0x20 || r == 0x7f:
		return TextControl
	case r >= 0x80:
		return TextNonASCII
	}
	return 0
}
