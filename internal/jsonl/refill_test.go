package jsonl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line is handed on as a slice of the read buffer, valid during the
// callback only: a callback that copies what it needs (and keeps nothing)
// must see every line whole, whatever the buffer's size, across refills:
// lines straddling the buffer's end, lines longer than the buffer (copied),
// over MaxLine (skipped, reported), \r\n endings and a torn last line (left
// for later).
func TestReaderAcrossRefills(t *testing.T) {
	long := `{"k":"` + strings.Repeat("x", 300) + `"}`
	huge := `{"k":"` + strings.Repeat("y", MaxLine) + `"}`
	for _, tt := range []struct {
		name      string
		data      string
		want      []string
		bad       int
		wantLines int
	}{
		{"straddling", `{"a":1}` + "\n" + `{"bb":22}` + "\n" + `{"ccc":333}` + "\n",
			[]string{`{"a":1}`, `{"bb":22}`, `{"ccc":333}`}, 0, 3},
		{"crlf", `{"a":1}` + "\r\n" + `{"b":2}` + "\r\n\r\n",
			[]string{`{"a":1}`, `{"b":2}`}, 0, 3},
		{"longer than the buffer", long + "\n" + `{"a":1}` + "\n" + long + "\r\n",
			[]string{long, `{"a":1}`, long}, 0, 3},
		{"over MaxLine", `{"a":1}` + "\n" + huge + "\n" + `{"b":2}` + "\n",
			[]string{`{"a":1}`, `{"b":2}`}, 1, 3},
		{"torn last line", `{"a":1}` + "\n" + long[:100],
			[]string{`{"a":1}`}, 0, 1},
		{"torn long last line", `{"a":1}` + "\n" + huge[:MaxLine/2],
			[]string{`{"a":1}`}, 0, 1},
		{"malformed", "{\"a\":\n" + `{"b":2}` + "\n",
			[]string{`{"b":2}`}, 1, 2},
	} {
		for _, size := range []int{1, 2, 7, 16, 64, 0} { // 0: the usual buffer
			path := filepath.Join(t.TempDir(), "x.jsonl")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			r := &Reader{Path: path, bufLimit: size}
			bad := 0
			r.Bad = func(BadLine) { bad++ }
			var got []string
			if err := r.Next(func(raw []byte) error { got = append(got, string(raw)); return nil }); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || bad != tt.bad || r.Line != tt.wantLines {
				t.Errorf("%s, %d-byte buffer: got %d lines (%d bad, Line %d), want %d (%d bad, Line %d)\n%.80q",
					tt.name, size, len(got), bad, r.Line, len(tt.want), tt.bad, tt.wantLines, got)
			}
			if want := int64(strings.LastIndexByte(tt.data, '\n') + 1); r.Offset != want {
				t.Errorf("%s, %d-byte buffer: offset %d, want %d", tt.name, size, r.Offset, want)
			}
		}
	}
}

// A long-lived reader that met a line far longer than its read buffer does
// not keep the megabyte it assembled it in.
func TestReaderDropsALongLinesBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	long := `{"x":"` + strings.Repeat("y", 600<<10) + `"}`
	if err := os.WriteFile(path, []byte(long+"\n"+`{"a":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Reader{Path: path}
	var lens []int
	if err := r.Next(func(raw []byte) error { lens = append(lens, len(raw)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lens) != 2 || lens[0] != len(long) {
		t.Fatalf("lines of %v bytes, want %d then 7", lens, len(long))
	}
	if cap(r.long) > maxKeptLong {
		t.Fatalf("the reader keeps %d bytes of a long line's buffer", cap(r.long))
	}
}
