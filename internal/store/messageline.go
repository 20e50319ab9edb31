package store

import (
	"encoding/binary"
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
	p := flatObject{raw: raw}
	var out Message
	if !p.object(func(key []byte, val span) bool { return out.setField(&p, key, val) }) {
		return false
	}
	*m = out
	return true
}

// setField stores one member of the object; false means "not handled".
func (m *Message) setField(p *flatObject, key []byte, val span) bool {
	var dst *string
	switch string(key) {
	case "id":
		dst = &m.ID
	case "phase_id":
		dst = &m.PhaseID
	case "author":
		dst = &m.Author
	case "role":
		dst = &m.Role
	case "content":
		dst = &m.Content
	case "timestamp":
		// encoding/json hands time.Time the raw quoted value, escapes and all.
		return val.isString && m.Timestamp.UnmarshalJSON(p.raw[val.start-1:val.end+1]) == nil
	default:
		return !foldsToMessageField(key)
	}
	if !val.isString {
		return false
	}
	s, ok := p.text(val)
	*dst = s
	return ok
}

// foldsToMessageField reports whether encoding/json might match key (an
// ASCII key, see flatObject.object) to one of Message's fields although it
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

// flatObject scans one JSON object whose values are scalars, validating as
// strictly as encoding/json's scanner; anything else is "not handled".
type flatObject struct {
	raw  []byte
	i    int
	line string // string(raw), made once: unescaped strings are cut from it
}

// span is a value's bytes: for a string, between its quotes.
type span struct {
	start, end int
	isString   bool
	escaped    bool // holds a backslash
	nonASCII   bool // holds a byte >= 0x80
}

// object scans the whole line as one object and calls member for each
// key and value, in order; keys are plain ASCII without escapes (any other
// key is not handled).
func (p *flatObject) object(member func(key []byte, val span) bool) bool {
	p.space()
	if !p.eat('{') {
		return false
	}
	p.space()
	if !p.eat('}') {
		for {
			key, ok := p.str()
			if !ok || key.escaped || key.nonASCII {
				return false
			}
			p.space()
			if !p.eat(':') {
				return false
			}
			p.space()
			val, ok := p.value()
			if !ok || !member(p.raw[key.start:key.end], val) {
				return false
			}
			p.space()
			if p.eat('}') {
				break
			}
			if !p.eat(',') {
				return false
			}
			p.space()
		}
	}
	p.space()
	return p.i == len(p.raw)
}

func (p *flatObject) space() {
	for p.i < len(p.raw) {
		switch p.raw[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *flatObject) eat(c byte) bool {
	if p.i < len(p.raw) && p.raw[p.i] == c {
		p.i++
		return true
	}
	return false
}

// value scans a string, a number, true, false or null.
func (p *flatObject) value() (span, bool) {
	if p.i >= len(p.raw) {
		return span{}, false
	}
	switch c := p.raw[p.i]; {
	case c == '"':
		return p.str()
	case c == '-' || '0' <= c && c <= '9':
		return span{}, p.number()
	case c == 't':
		return span{}, p.word("true")
	case c == 'f':
		return span{}, p.word("false")
	case c == 'n':
		return span{}, p.word("null")
	}
	return span{}, false
}

func (p *flatObject) word(w string) bool {
	if len(p.raw)-p.i < len(w) || string(p.raw[p.i:p.i+len(w)]) != w {
		return false
	}
	p.i += len(w)
	return true
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *flatObject) number() bool {
	p.eat('-')
	if p.eat('0') {
		// no more integer digits after a leading zero
	} else if !p.digits() {
		return false
	}
	if p.eat('.') && !p.digits() {
		return false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		return p.digits()
	}
	return true
}

// digits scans one or more decimal digits.
func (p *flatObject) digits() bool {
	start := p.i
	for p.i < len(p.raw) && '0' <= p.raw[p.i] && p.raw[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// str scans a string from its opening quote, validating its escapes as
// encoding/json's scanner does.
func (p *flatObject) str() (span, bool) {
	if !p.eat('"') {
		return span{}, false
	}
	s := span{start: p.i, isString: true}
	raw := p.raw
	for i := p.i; i < len(raw); {
		i = plainRun(raw, i)
		if i == len(raw) {
			break
		}
		switch c := raw[i]; {
		case c == '"':
			s.end, p.i = i, i+1
			return s, true
		case c == '\\':
			s.escaped = true
			p.i = i
			if !p.escape() {
				return span{}, false
			}
			i = p.i
		case c < 0x20:
			return span{}, false
		default:
			s.nonASCII = true
			i++
		}
	}
	return span{}, false
}

// plainRun returns the index of the first byte from i on that ends a run
// of plain string bytes (printable ASCII but '"' and '\\'), or len(b). It
// tests eight bytes at a time: the string bytes are most of a line.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
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

// escape scans one escape sequence from its backslash.
func (p *flatObject) escape() bool {
	if p.i+1 >= len(p.raw) {
		return false
	}
	switch p.raw[p.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i += 2
		return true
	case 'u':
		if _, ok := hex4(p.raw[p.i+2:]); !ok {
			return false
		}
		p.i += 6
		return true
	}
	return false
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

// text is the Go string of a scanned string value, as encoding/json
// unquotes it; false for what it would rewrite (invalid UTF-8, surrogate
// escapes).
func (p *flatObject) text(s span) (string, bool) {
	b := p.raw[s.start:s.end]
	if s.nonASCII && !utf8.Valid(b) {
		return "", false
	}
	if !s.escaped {
		if p.line == "" {
			p.line = string(p.raw)
		}
		return p.line[s.start:s.end], true
	}
	return unescape(b)
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
