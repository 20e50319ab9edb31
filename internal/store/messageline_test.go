package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
)

// checkDecodeLine asserts DecodeLine's contract on raw: when it decodes,
// the line is valid JSON and the Message is exactly json.Unmarshal's; when
// it does not, the Message is untouched. It reports whether it decoded.
func checkDecodeLine(t *testing.T, raw []byte) bool {
	t.Helper()
	sentinel := Message{ID: "untouched", Content: "x"}
	got := sentinel
	if !got.DecodeLine(raw) {
		if got != sentinel {
			t.Fatalf("DecodeLine(%q) refused the line but changed the message to %+v", raw, got)
		}
		return false
	}
	var want Message
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("DecodeLine(%q) decoded a line json.Unmarshal refuses: %v", raw, err)
	}
	if !sameMessage(got, want) {
		t.Fatalf("DecodeLine(%q)\n got %#v\nwant %#v", raw, got, want)
	}
	return true
}

// checkView asserts MessageView's contract on raw: it takes the lines
// json.Valid takes, decodes them as json.Unmarshal does, and classifies
// each string exactly (TextUnknown where encoding/json decoded); and that
// validLine vouches only for valid lines, and for every line DecodeLine
// decodes. fast is whether DecodeLine decoded raw.
func checkView(t *testing.T, raw []byte, fast bool) {
	t.Helper()
	var v MessageView
	// A view that decoded a line before: its scratch buffer and its
	// timestamp cache are in use.
	prev := []byte(`{"id":"m","content":"a\u003cb\n","timestamp":"2026-01-02T03:04:05.5Z"}`)
	if !v.DecodeLine(prev) {
		t.Fatal("the view refused a pm line")
	}
	ok := v.DecodeLine(raw)
	if ok != json.Valid(raw) {
		t.Fatalf("MessageView.DecodeLine(%q) = %v, json.Valid says %v", raw, ok, !ok)
	}
	if vl := validLine(raw); vl && !json.Valid(raw) || fast && !vl {
		t.Fatalf("validLine(%q) = %v, DecodeLine %v, json.Valid %v", raw, vl, fast, json.Valid(raw))
	}
	if !ok {
		return
	}
	var want Message
	_ = json.Unmarshal(raw, &want) // a valid line that does not fit: what fits
	if !sameMessage(v.Message, want) {
		t.Fatalf("MessageView.DecodeLine(%q)\n got %#v\nwant %#v", raw, v.Message, want)
	}
	for _, f := range []struct {
		name  string
		s     string
		class TextClass
	}{{"author", v.Author, v.AuthorClass}, {"role", v.Role, v.RoleClass}, {"content", v.Content, v.ContentClass}} {
		want := TextUnknown
		if fast {
			want = classOf(f.s)
		}
		if f.class != want {
			t.Fatalf("MessageView.DecodeLine(%q): %s %q class %b, want %b", raw, f.name, f.s, f.class, want)
		}
	}
}

// classOf is a string's TextClass, byte by byte.
func classOf(s string) TextClass {
	var c TextClass
	for i := range len(s) {
		switch b := s[i]; {
		case b == '\n' || b == '\t':
			c |= TextBreaks
		case b < 0x20 || b == 0x7f:
			c |= TextControl
		case b >= 0x80:
			c |= TextNonASCII
		}
	}
	return c
}

// sameMessage is ==, but for a time with an offset, whose *time.Location
// each parse makes anew: there the instant, the zone's name and its offset
// must be the same.
func sameMessage(a, b Message) bool {
	an, ao := a.Timestamp.Zone()
	bn, bo := b.Timestamp.Zone()
	ta, tb := a.Timestamp, b.Timestamp
	a.Timestamp, b.Timestamp = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb) && an == bn && ao == bo && ta.Location().String() == tb.Location().String() &&
		ta.String() == tb.String()
}

func TestDecodeLine(t *testing.T) {
	pmLine, err := json.Marshal(Message{ID: "msg-a1b2c3", PhaseID: "ph-d4e5f6", Author: "cedar_a1b2", Role: "designer",
		Content: "line one\nline \"two\" <b>&amp;</b> \\ é ✓ \u2028 \x1b[31m\x00", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	const ts = `"timestamp":"2026-01-02T03:04:05.000000006Z"`
	cases := []struct {
		name string
		line string
		fast bool // the fast path must handle it (else it must refuse it)
	}{
		{"what pm writes", string(pmLine), true},
		{"no role", `{"id":"m","phase_id":"p","author":"a","content":"hi",` + ts + `}`, true},
		{"empty object", `{}`, true},
		{"whitespace around everything", " \t{ \"id\" : \"a\" ,\r\n\"content\":\"b\" } \r\n", true},
		{"every simple escape", `{"content":"\"\\\/\b\f\n\r\t"}`, true},
		{"unicode escapes", `{"content":"\u0000\u001b\u003c\u00e9\u2028\uFFFF\u0041"}`, true},
		{"valid UTF-8", `{"content":"héllo ✓ 𝄞 ` + "\u202e" + `"}`, true},
		{"duplicate keys: the last wins", `{"id":"a","id":"b","content":"x","content":"y"}`, true},
		{"duplicate timestamps", `{` + ts + `,"timestamp":"2027-01-01T00:00:00+02:00"}`, true},
		{"timestamp with an offset", `{"timestamp":"2026-01-02T03:04:05.5-07:30"}`, true},
		{"unknown keys with scalars", `{"n":1,"big":123456789012345678901234567890e999999,"f":-0.5E+10,"z":0,"t":true,"u":false,"v":null,"s":"\u00ff","id":"a"}`, true},
		{"unknown key with invalid UTF-8 in its value", "{\"x\":\"\xff\",\"id\":\"a\"}", true},
		{"long plain strings across words", `{"content":"` + strings.Repeat("abcdefg ", 40) + `"}`, true},

		{"invalid UTF-8 (json replaces it)", "{\"content\":\"a\xffb\"}", false},
		{"truncated UTF-8", "{\"content\":\"\xe2\x9c\"}", false},
		{"surrogate pair (json pairs it)", `{"content":"\ud834\udd1e"}`, false},
		{"lone surrogate (json replaces it)", `{"content":"\ud800"}`, false},
		{"key differing in case", `{"ID":"a"}`, false},
		{"key differing in case, unknown", `{"Content":"a"}`, false},
		{"non-ASCII key folding to a field", `{"phaſe_id":"a"}`, false},
		{"escaped key", `{"\u0069d":"a"}`, false},
		{"field holding a number", `{"id":1}`, false},
		{"field holding null", `{"id":null}`, false},
		{"timestamp holding null", `{"timestamp":null}`, false},
		{"timestamp time refuses", `{"timestamp":"yesterday"}`, false},
		{"timestamp with an escape", `{"timestamp":"2026-01-02T03:04:05\u005a"}`, false},
		{"nested object", `{"x":{"id":"a"},"id":"b"}`, false},
		{"nested array", `{"x":[1],"id":"b"}`, false},
		{"torn line", `{"id":"a","content":"hel`, false},
		{"torn marker", `{"id":"a"}!torn`, false},
		{"two values", `{"id":"a"}{"id":"b"}`, false},
		{"trailing comma", `{"id":"a",}`, false},
		{"missing colon", `{"id" "a"}`, false},
		{"missing value", `{"id":}`, false},
		{"raw control byte", "{\"content\":\"a\tb\"}", false},
		{"raw newline", "{\"content\":\"a\nb\"}", false},
		{"bad escape", `{"content":"\x41"}`, false},
		{"short unicode escape", `{"content":"\u00e"}`, false},
		{"leading zero", `{"n":01}`, false},
		{"bare minus", `{"n":-}`, false},
		{"no fraction digits", `{"n":1.}`, false},
		{"no exponent digits", `{"n":1e}`, false},
		{"plus sign", `{"n":+1}`, false},
		{"misspelt literal", `{"n":nul}`, false},
		{"single quotes", `{'id':'a'}`, false},
		{"array", `[1,2]`, false},
		{"string", `"x"`, false},
		{"empty", ``, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fast := checkDecodeLine(t, []byte(c.line))
			checkView(t, []byte(c.line), fast)
			if fast != c.fast {
				t.Errorf("DecodeLine(%q) handled = %v, want %v", c.line, fast, c.fast)
			}
		})
	}
}

// plainRun finds the first byte that ends a plain run wherever it falls
// in the eight-byte words it tests.
func TestPlainRun(t *testing.T) {
	for n := range 20 {
		for at := range n + 1 {
			for _, special := range []byte{'"', '\\', 0x00, 0x1f, 0x80, 0xff} {
				b := []byte(strings.Repeat("a~ ", 7)[:n])
				want := n
				if at < n {
					b[at], want = special, at
				}
				if got := plainRun(b, 0); got != want {
					t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// plainMessage has Message's fields and not its DecodeLine, so jsonl.Decode
// reads it with encoding/json alone.
type plainMessage Message

// Message's fast decode (DecodeLine, what jsonl.Decode uses for a
// Message) passes on the same lines, messages and bad-line reports as a
// decode with encoding/json alone.
func TestDecodeMessageLinesMatchesEncodingJSON(t *testing.T) {
	s := newInternalStore(t)
	path := s.MessagesPath("tk-000001", "ph-000001")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	content := strings.Join([]string{
		`{"id":"m1","author":"a","content":"plain","timestamp":"2026-01-02T03:04:05Z"}`,
		`{"id":"m2","content":"torn`,
		"{\"id\":\"m3\",\"content\":\"bad \xff utf8\"}",
		`{"id":"m4","timestamp":"not a time"}`,
		`{"id":5}`,
		`[1]`,
		``,
		`{"ID":"m6","Content":"folded"}`,
		`{"id":"m7"}!torn`,
		`{"id":"m8","content":"\ud83d\ude00"}`,
	}, "\n") + "\n" + `{"id":"unterminated"}`
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		raw string
		m   Message
	}
	same := func(a, b seen) bool { return a.raw == b.raw && sameMessage(a.m, b.m) }
	var warned strings.Builder
	var jsonBad []jsonl.BadLine
	var fast, slow []seen
	s.Warn = &warned
	if err := jsonl.Decode(&jsonl.Reader{Path: path, Bad: s.BadLine}, func(raw []byte, m *Message) error {
		if m.ID == "" {
			return nil
		}
		fast = append(fast, seen{string(raw), *m})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := &jsonl.Reader{Path: path, Bad: func(b jsonl.BadLine) { jsonBad = append(jsonBad, b) }}
	if err := jsonl.Decode(r, func(raw []byte, m *plainMessage) error {
		if m.ID == "" {
			return nil // no message (the count skips it too): not passed on
		}
		slow = append(slow, seen{string(raw), Message(*m)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(fast, slow, same) {
		t.Errorf("Message's decode passed on\n%+v\nencoding/json alone\n%+v", fast, slow)
	}
	var want strings.Builder
	for _, b := range jsonBad {
		want.WriteString("pm: warning: " + b.String() + "\n")
	}
	// A bad time is valid JSON whose value does not fit: passed on (with
	// a zero time), as Next and Count take it; only lines that are not JSON
	// are reported.
	if warned.String() != want.String() || len(jsonBad) != 2 {
		t.Errorf("Message's decode reported\n%s\nencoding/json alone\n%s(want 2: torn, torn marker)", warned.String(), want.String())
	}
}

// FuzzDecodeLine: on any line DecodeLine either leaves the message alone
// or gives exactly what json.Unmarshal gives; MessageView and validLine
// agree (checkView).
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"id":"msg-a1b2c3","phase_id":"ph-d4e5f6","author":"cedar_a1b2","role":"designer","content":"hi \"there\"\n\u003c","timestamp":"2026-01-02T03:04:05.123Z"}`,
		`{"id":"a","id":"b","x":[1],"n":-1.5e3,"t":true,"v":null}`,
		"{\"content\":\"\xff\\ud800\"}",
		`{"ID":"a","timestamp":"2026-13-01T00:00:00Z"}`,
		` { "content" : "` + strings.Repeat("ab\\\"", 9) + `" } `,
		"{\"author\":\"a\x7fb\",\"role\":\"r\\t\",\"content\":\"\\u007f\\u0085\\b\xc3\xa9\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkView(t, raw, checkDecodeLine(t, raw))
	})
}
