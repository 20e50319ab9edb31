package store

import (
	"math/bits"
	"strings"
	"unicode/utf8"
)

// DecodeLine decodes one messages.jsonl line into m without reflection when
// the line has the shape pm writes (phase.Say): one flat JSON object whose
// values are strings, numbers, true, false or null. It is the fast path of
// jsonl.Decode (jsonl.LineDecoder), about a tenth of encoding/json's cost.
//
// It reports false, leaving m untouched, for anything it does not handle:
// invalid JSON, a nested value, a Message field holding no string, a key
// that is not exactly a field's name but might match one the way
// encoding/json matches names (case-insensitively, non-ASCII, escaped), a
// string with a surrogate escape or invalid UTF-8 (which encoding/json
// rewrites), a timestamp time.Time refuses. The caller then decodes the
// line with encoding/json. Whenever it reports true, m is exactly what
// json.Unmarshal gives, duplicate keys included (the last one wins):
// FuzzDecodeLine compares the two.
func (m *Message) DecodeLine(raw []byte) bool {
	var out Message
	var line string // string(raw), made once: unescaped strings are cut from it
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		i++
	} else {
		for {
			f, next, ok := scanKey(raw, i)
			if !ok {
				return false
			}
			i = skipSpace(raw, next)
			if i == len(raw) || raw[i] != ':' {
				return false
			}
			if i, ok = out.setField(f, raw, skipSpace(raw, i+1), &line); !ok {
				return false
			}
			i = skipSpace(raw, i)
			if i < len(raw) && raw[i] == ',' {
				i = skipSpace(raw, i+1)
				continue
			}
			if i < len(raw) && raw[i] == '}' {
				i++
				break
			}
			return false
		}
	}
	if skipSpace(raw, i) != len(raw) {
		return false
	}
	*m = out
	return true
}

// The members of Message, as scanKey numbers them; noField is a key that
// is none of them.
const (
	noField = iota
	fieldID
	fieldPhaseID
	fieldAuthor
	fieldRole
	fieldContent
	fieldTimestamp
)

// scanKey scans a key from its opening quote at raw[i] and returns the
// field it names and the index after it. A key that is not a field's exact
// name must be plain ASCII and not match one the way encoding/json matches
// names (case-insensitively): anything else is not handled.
func scanKey(raw []byte, i int) (field, next int, ok bool) {
	if i+1 >= len(raw) || raw[i] != '"' {
		return noField, 0, false
	}
	name, f := "", noField
	switch raw[i+1] {
	case 'i':
		name, f = "id", fieldID
	case 'p':
		name, f = "phase_id", fieldPhaseID
	case 'a':
		name, f = "author", fieldAuthor
	case 'r':
		name, f = "role", fieldRole
	case 'c':
		name, f = "content", fieldContent
	case 't':
		name, f = "timestamp", fieldTimestamp
	}
	if rest := raw[i+1:]; f != noField && len(rest) > len(name) && rest[len(name)] == '"' && string(rest[:len(name)]) == name {
		return f, i + 2 + len(name), true
	}
	end, escaped, nonASCII, ok := scanString(raw, i+1)
	if !ok || escaped || nonASCII || foldsToMessageField(raw[i+1:end]) {
		return noField, 0, false
	}
	return noField, end + 1, true
}

// setField scans the value at raw[i] into field f and returns the index
// after it: a string for a field of Message, any scalar for another key.
func (m *Message) setField(f int, raw []byte, i int, line *string) (next int, ok bool) {
	if f == noField {
		return skipScalar(raw, i)
	}
	if i == len(raw) || raw[i] != '"' {
		return 0, false // encoding/json would fail or go by another path
	}
	end, escaped, nonASCII, ok := scanString(raw, i+1)
	if !ok {
		return 0, false
	}
	if f == fieldTimestamp {
		if t, ok := parseUTC(raw[i+1 : end]); ok {
			m.Timestamp = t
			return end + 1, true
		}
		// encoding/json hands time.Time the raw quoted value, escapes and all.
		return end + 1, m.Timestamp.UnmarshalJSON(raw[i:end+1]) == nil
	}
	var s string
	switch {
	case nonASCII && !utf8.Valid(raw[i+1:end]):
		return 0, false // encoding/json replaces what is not UTF-8
	case escaped:
		if s, ok = unescape(raw[i+1 : end]); !ok {
			return 0, false
		}
	default:
		if *line == "" {
			*line = string(raw)
		}
		s = (*line)[i+1 : end]
	}
	switch f {
	case fieldID:
		m.ID = s
	case fieldPhaseID:
		m.PhaseID = s
	case fieldAuthor:
		m.Author = s
	case fieldRole:
		m.Role = s
	case fieldContent:
		m.Content = s
	}
	return end + 1, true
}

// foldsToMessageField reports whether encoding/json might match key (an
// ASCII key, see scanKey) to one of Message's fields although it
// is not spelt exactly so: ASCII keys match case-insensitively.
func foldsToMessageField(key []byte) bool {
	for _, name := range [...]string{"id", "phase_id", "author", "role", "content", "timestamp"} {
		if asciiEqualFold(key, name) {
			return true
		}
	}
	return false
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// skipSpace returns the index of the first byte from i on that is not JSON
// white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
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
	for {
		i = plainRun(raw, i)
		if i == len(raw) {
			return 0, false, false, false
		}
		switch c := raw[i]; {
		case c == '"':
			return i, escaped, nonASCII, true
		case c == '\\':
			escaped = true
			if i, ok = scanEscape(raw, i); !ok {
				return 0, false, false, false
			}
		case c < 0x20:
			return 0, false, false, false
		default:
			nonASCII = true
			i++
		}
	}
}

// plainRun returns the index of the first byte from i on that ends a run
// of plain string bytes (printable ASCII but '"' and '\\'), or len(b). It
// tests eight bytes at a time: the string bytes are most of a line.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		q, bs := x^(ones*'"'), x^(ones*'\\')
		// A byte's high bit is set in special iff it is < 0x20, '"', '\\'
		// or >= 0x80; borrows only flag bytes above a special one, so the
		// lowest flagged byte is the first special one.
		special := (x-ones*0x20)&^x | (q-ones)&^q | (bs-ones)&^bs | x
		if special&highs != 0 {
			return i + bits.TrailingZeros64(special&highs)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
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
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c != '\\' {
			out.WriteByte(c)
			i++
			continue
		}
		switch e := b[i+1]; e {
		case 'u':
			r, _ := hex4(b[i+2:])
			if 0xd800 <= r && r < 0xe000 {
				return "", false // surrogates: encoding/json pairs or replaces them
			}
			out.WriteRune(r)
			i += 6
			continue
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
			c = e
		}
		out.WriteByte(c)
		i += 2
	}
	return out.String(), true
}
