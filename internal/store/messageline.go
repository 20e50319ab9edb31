package store

import (
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// DecodeLine decodes one messages.jsonl line into m without reflection when
// the line has the shape pm writes (phase.Say): one flat JSON object whose
// values are strings, numbers, true, false or null. It is the fast path of
// jsonl.Decode (jsonl.LineDecoder), several times cheaper than encoding/json.
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
	d := lineDecoder{out: &out}
	if !d.decode(raw) {
		return false
	}
	*m = out
	return true
}

// lineDecoder is DecodeLine's one pass over a line, in one of three modes:
// into a Message that owns its strings (DecodeLine), into a MessageView
// whose strings alias the line (view set), or only checking that the line
// is JSON (check set).
type lineDecoder struct {
	out   *Message
	line  string       // DecodeLine: string(raw), made once: unescaped strings are cut from it
	view  *MessageView // the view decoded into, out being &view.Message
	check bool         // no values: the line is only validated
}

// decode scans raw as DecodeLine documents, setting d.out's fields.
func (d *lineDecoder) decode(raw []byte) bool {
	i, end, ok := objectStart(raw, skipSpace(raw, 0))
	for ok && !end {
		var f, next int
		if f, next, ok = scanKey(raw, i); !ok {
			return false
		}
		if i, ok = memberValue(raw, next); !ok {
			return false
		}
		if d.check {
			f = noField
		}
		if i, ok = d.setField(f, raw, i); !ok {
			return false
		}
		i, end, ok = memberEnd(raw, i)
	}
	return wholeDocument(raw, i, ok)
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
// Into a Message it decodes as the records do (stringInto, timeInto); into
// a view, see viewField.
func (d *lineDecoder) setField(f int, raw []byte, i int) (next int, ok bool) {
	switch {
	case f == noField:
		return skipScalar(raw, i)
	case d.view != nil:
		return d.viewField(f, raw, i)
	case f == fieldTimestamp:
		return timeInto(raw, i, &d.out.Timestamp)
	}
	var s string
	if next, ok = stringInto(raw, i, &d.line, &s); ok {
		d.out.setString(f, s)
	}
	return next, ok
}

// setString sets the string field f.
func (m *Message) setString(f int, s string) {
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
}

// viewField is setField into a view: strings alias the line, or the view's
// scratch buffer when they have escapes (unescaped as they are scanned),
// each with its TextClass; timestamps go through the view's minute cache.
func (d *lineDecoder) viewField(f int, raw []byte, i int) (next int, ok bool) {
	if i == len(raw) || raw[i] != '"' {
		return 0, false // encoding/json would fail or go by another path
	}
	v := d.view
	var st stringScan
	var start int // where the unescaped string starts in the scratch buffer
	var dst *[]byte
	if f != fieldTimestamp {
		start, dst = len(v.scratch), &v.scratch
	}
	end, ok := st.scan(raw, i+1, dst)
	if !ok {
		return 0, false
	}
	if f == fieldTimestamp {
		if t, ok := v.stamp.parse(raw[i+1 : end]); ok {
			v.Timestamp = t
			return end + 1, true
		}
		// encoding/json hands time.Time the raw quoted value, escapes and all.
		return end + 1, v.Timestamp.UnmarshalJSON(raw[i:end+1]) == nil
	}
	if st.nonASCII && !utf8.Valid(raw[i+1:end]) {
		return 0, false // encoding/json replaces what is not UTF-8
	}
	class := st.class
	if st.nonASCII {
		class |= TextNonASCII
	}
	if st.del {
		class |= TextControl
	}
	var s string
	if st.escaped {
		s = unsafe.String(unsafe.SliceData(v.scratch[start:]), len(v.scratch)-start)
	} else {
		s = unsafe.String(unsafe.SliceData(raw[i+1:end]), end-i-1)
	}
	v.setString(f, s)
	switch f {
	case fieldAuthor:
		v.AuthorClass = class
	case fieldRole:
		v.RoleClass = class
	case fieldContent:
		v.ContentClass = class
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

// DecodeMessage decodes one messages.jsonl line as json.Unmarshal into a
// zero Message would (DecodeLine's fast path first): the room's readers
// outside jsonl.Decode (pm chat --follow and --wait) use it.
func DecodeMessage(raw []byte) (Message, error) {
	var m Message
	if m.DecodeLine(raw) {
		return m, nil
	}
	err := json.Unmarshal(raw, &m)
	return m, err
}
