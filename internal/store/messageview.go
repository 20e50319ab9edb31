package store

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
)

// TextClass says which bytes a decoded string holds beyond printable ASCII
// (0x20 to 0x7e), as the decoder saw them: what a printer must escape
// (render.Terminal) without scanning the string again. 0 is printable
// ASCII only.
type TextClass uint8

const (
	TextBreaks   TextClass = 1 << iota // '\n' or '\t'
	TextControl                        // another byte below 0x20, or DEL (0x7f)
	TextNonASCII                       // a byte from 0x80 up
	// TextUnknown is a string the decoder did not classify (a line
	// encoding/json decoded): a printer must look at it itself.
	TextUnknown = TextControl | TextNonASCII
)

// MessageView is a Message decoded from a messages.jsonl line for a reader
// that uses it at once and keeps nothing (pm chat prints each message as it
// reads it): its strings alias the line, or a scratch buffer of the view
// for a string with escapes, so decoding a line allocates nothing. They are
// valid only until the view decodes the next line, or the line's buffer is
// reused (jsonl.Reader: when the callback returns); a reader that keeps a
// message copies it (DecodeMessage decodes one that owns its strings).
//
// The decoding is DecodeLine's, values and all: the same lines are
// decoded, the same fields set; a line DecodeLine leaves to encoding/json
// is decoded by encoding/json here too (allocating: only lines pm did not
// write), its classes TextUnknown.
type MessageView struct {
	Message
	// What Author, Role and Content hold (TextClass).
	AuthorClass, RoleClass, ContentClass TextClass

	scratch []byte     // the unescaped strings of this line
	stamp   stampCache // the last timestamp's minute
}

// DecodeLine decodes raw into v (see MessageView) as DecodeLine decodes
// into a Message. It reports false, v's fields then unspecified, for a
// line that is not JSON.
func (v *MessageView) DecodeLine(raw []byte) bool {
	v.scratch = v.scratch[:0]
	v.Message = Message{}
	v.AuthorClass, v.RoleClass, v.ContentClass = 0, 0, 0
	d := lineDecoder{out: &v.Message, view: v}
	if d.decode(raw) {
		return true
	}
	v.Message = Message{}
	v.AuthorClass, v.RoleClass, v.ContentClass = TextUnknown, TextUnknown, TextUnknown
	err := json.Unmarshal(raw, &v.Message)
	if err == nil {
		return true
	}
	// A valid line whose values do not fit Message is still a record,
	// with what fits (jsonl.Decode).
	var syn *json.SyntaxError
	return !errors.As(err, &syn) && json.Valid(raw)
}

// validLine reports that raw is a JSON line of the shape pm writes,
// checked by DecodeLine's scanner without decoding anything; false means
// "not vouched for" (json.Valid then decides).
func validLine(raw []byte) bool {
	d := lineDecoder{check: true}
	return d.decode(raw)
}

// ReadMessageViews calls fn with each message line of the phase's log, in
// order, as written, for a reader that uses each line at once and keeps
// nothing (pm chat): with v, each line is decoded into v
// before fn runs (MessageView: nothing allocated for the lines pm writes);
// with v nil, each line is only checked to be JSON, by DecodeLine's
// scanner for pm's own lines and encoding/json for the others (pm chat
// --json prints the lines as written). fn gets the same lines, and the
// same lines are reported, as a decode of Message (torn and malformed
// lines skipped and reported, lines with no id skipped); raw and v are valid only
// until fn returns.
func (s *Store) ReadMessageViews(taskID, phaseID string, v *MessageView, fn func(raw []byte) error) error {
	r := &jsonl.Reader{Path: s.MessagesPath(taskID, phaseID), Bad: s.BadLine}
	// Only messages (isMessage, the count's definition) go to fn.
	if v == nil {
		return r.NextChecked(validLine, func(raw []byte) error {
			if !isMessage(raw) {
				return nil
			}
			return fn(raw)
		})
	}
	return r.NextChecked(v.DecodeLine, func(raw []byte) error {
		if v.ID == "" {
			return nil
		}
		return fn(raw)
	})
}

// stampCache parses pm's timestamps (parseUTC) a minute at a time: the
// lines of a room mostly share their minute, so a timestamp whose first 16
// bytes ("2006-01-02T15:04") are the last one's only needs its seconds and
// fraction parsed.
type stampCache struct {
	minute [16]byte
	at     time.Time // that minute, UTC
	ok     bool
}

// parse is parseUTC(b), the same time.Time.
func (c *stampCache) parse(b []byte) (time.Time, bool) {
	const short = len("2006-01-02T15:04:05Z")
	if c.ok && len(b) >= short && len(b) <= short+10 && b[len(b)-1] == 'Z' && b[16] == ':' && string(b[:16]) == string(c.minute[:]) {
		sec := num2(b[17], b[18])
		nsec, ok := fraction(b[19 : len(b)-1])
		if sec < 0 || sec > 59 || !ok {
			return time.Time{}, false
		}
		return c.at.Add(time.Duration(sec)*time.Second + time.Duration(nsec)), true
	}
	t, ok := parseUTC(b)
	if ok {
		copy(c.minute[:], b)
		c.at, c.ok = t.Add(-time.Duration(t.Second())*time.Second-time.Duration(t.Nanosecond())), true
	}
	return t, ok
}
