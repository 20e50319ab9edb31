package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type rec struct {
	W int    `json:"w"`
	N int    `json:"n"`
	S string `json:"s,omitempty"`
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendRaw(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readAllLines runs a fresh Reader over path and returns its lines and reports.
func readAllLines(t *testing.T, path string) ([]string, []BadLine) {
	t.Helper()
	var bad []BadLine
	r := &Reader{Path: path, Bad: func(b BadLine) { bad = append(bad, b) }}
	var lines []string
	if err := r.Next(func(raw []byte) error { lines = append(lines, string(raw)); return nil }); err != nil {
		t.Fatal(err)
	}
	return lines, bad
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name   string
		before string // raw content before the appends ("" = no file)
		recs   []any
		want   string
	}{
		{name: "new file", recs: []any{rec{W: 1, N: 1}}, want: `{"w":1,"n":1}` + "\n"},
		{name: "two records", recs: []any{rec{N: 1}, rec{N: 2}}, want: "{\"w\":0,\"n\":1}\n{\"w\":0,\"n\":2}\n"},
		{name: "after whole lines", before: "{\"a\":1}\n", recs: []any{rec{N: 2}}, want: "{\"a\":1}\n{\"w\":0,\"n\":2}\n"},
		{name: "torn tail is terminated", before: "{\"a\":1}\n{\"b\":", recs: []any{rec{N: 2}}, want: "{\"a\":1}\n{\"b\":\n{\"w\":0,\"n\":2}\n"},
		{name: "torn only line", before: "{\"b", recs: []any{rec{N: 2}, rec{N: 3}}, want: "{\"b\n{\"w\":0,\"n\":2}\n{\"w\":0,\"n\":3}\n"},
		{name: "torn whole record is poisoned, never revived", before: "{\"a\":1}\n{\"b\":2}", recs: []any{rec{N: 2}}, want: "{\"a\":1}\n{\"b\":2}" + TornMarker + "\n{\"w\":0,\"n\":2}\n"},
		{name: "torn whole number is poisoned", before: "7", recs: []any{rec{N: 2}}, want: "7" + TornMarker + "\n{\"w\":0,\"n\":2}\n"},
		{name: "newline inside a string stays escaped", recs: []any{rec{S: "a\nb"}}, want: `{"w":0,"n":0,"s":"a\nb"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			if tt.before != "" {
				writeFile(t, path, tt.before)
			}
			for _, r := range tt.recs {
				if err := Append(path, r); err != nil {
					t.Fatal(err)
				}
			}
			if got := readFile(t, path); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAppendTornTailKeepsNextRecordValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	if err := Append(path, rec{N: 1}); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, path, `{"w":9,"n":`) // a writer killed mid-line
	if err := Append(path, rec{N: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll[rec](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].N != 1 || got[1].N != 2 {
		t.Fatalf("records = %+v, want n=1 and n=2", got)
	}
	_, bad := readAllLines(t, path)
	if len(bad) != 1 || bad[0].Line != 2 {
		t.Fatalf("bad lines = %+v, want one report for line 2", bad)
	}
}

func TestAppendRefusesOversizeRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	tests := []struct {
		name string
		size int // length of the string field
		ok   bool
	}{
		{"small", 10, true},
		// {"s":"..."} is 8 bytes of framing, plus the newline.
		{"just fits", MaxLine - 9, true},
		{"one over", MaxLine - 8, false},
		{"far over", 2 * MaxLine, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(path)
			err := Append(path, map[string]string{"s": strings.Repeat("x", tt.size)})
			if (err == nil) != tt.ok {
				t.Fatalf("Append(%d bytes) error = %v, want ok=%v", tt.size, err, tt.ok)
			}
			if !tt.ok {
				if !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name the file", err)
				}
				after, _ := os.ReadFile(path)
				if !bytes.Equal(before, after) {
					t.Errorf("refused append changed the file")
				}
			}
		})
	}
	n, err := Count(path)
	if err != nil || n != 2 {
		t.Fatalf("Count = %d, %v; want the 2 accepted records", n, err)
	}
}

func TestAppendUnmarshalableValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	if err := Append(path, map[string]any{"f": func() {}}); err == nil {
		t.Fatal("Append of a func succeeded")
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Fatalf("file = %q, want nothing written", b)
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		want     []string
		badLines []int
		offset   int64 // Reader.Offset after the read
		lines    int   // Reader.Line after the read
	}{
		{name: "empty", data: "", offset: 0},
		{name: "one", data: "{\"a\":1}\n", want: []string{`{"a":1}`}, offset: 8, lines: 1},
		{name: "malformed skipped with line numbers", data: "{\"a\":1}\nnot json\n{\"b\":2}\n{\"c\n[1]\n",
			want: []string{`{"a":1}`, `{"b":2}`, `[1]`}, badLines: []int{2, 4}, offset: 33, lines: 5},
		{name: "unterminated tail left unread", data: "{\"a\":1}\n{\"b\":2}", want: []string{`{"a":1}`}, offset: 8, lines: 1},
		{name: "only an unterminated line", data: "{\"a\":1}", offset: 0},
		{name: "blank lines skipped silently", data: "\n  \n{\"a\":1}\n\t\n", want: []string{`{"a":1}`}, offset: 14, lines: 4},
		{name: "crlf", data: "{\"a\":1}\r\n{\"b\":2}\r\n", want: []string{`{"a":1}`, `{"b":2}`}, offset: 18, lines: 2},
		{name: "scalars are valid json", data: "1\n\"s\"\nnull\n", want: []string{"1", `"s"`, "null"}, offset: 11, lines: 3},
		{name: "two values on one line are malformed", data: "{} {}\n", badLines: []int{1}, offset: 6, lines: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			writeFile(t, path, tt.data)
			var bad []int
			r := &Reader{Path: path, Bad: func(b BadLine) {
				if b.Path != path {
					t.Errorf("BadLine.Path = %q", b.Path)
				}
				bad = append(bad, b.Line)
			}}
			var got []string
			if err := r.Next(func(raw []byte) error { got = append(got, string(raw)); return nil }); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
			if fmt.Sprint(bad) != fmt.Sprint(tt.badLines) {
				t.Errorf("bad line numbers = %v, want %v", bad, tt.badLines)
			}
			if r.Offset != tt.offset || r.Line != tt.lines {
				t.Errorf("Offset, Line = %d, %d; want %d, %d", r.Offset, r.Line, tt.offset, tt.lines)
			}
		})
	}
}

func TestReaderBadLineOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	data := "{\"a\":1}\nbad\n{}\n{\"x\n"
	writeFile(t, path, data)
	var got []BadLine
	r := &Reader{Path: path, Bad: func(b BadLine) { got = append(got, b) }}
	if err := r.Next(func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := []BadLine{
		{Path: path, Line: 2, Offset: int64(strings.Index(data, "bad")), Reason: "malformed or torn JSON line"},
		{Path: path, Line: 4, Offset: int64(strings.Index(data, "{\"x")), Reason: "malformed or torn JSON line"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reports = %+v\nwant %+v", got, want)
	}
	if s := got[0].String(); s != path+":2: skipped malformed or torn JSON line" {
		t.Errorf("String() = %q", s)
	}
}

func TestReaderMissingFile(t *testing.T) {
	r := &Reader{Path: filepath.Join(t.TempDir(), "none.jsonl")}
	called := false
	if err := r.Next(func([]byte) error { called = true; return nil }); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	if called || r.Offset != 0 {
		t.Fatalf("missing file yielded lines or moved the offset")
	}
}

func TestReaderAcrossCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	var bad []int
	r := &Reader{Path: path, Bad: func(b BadLine) { bad = append(bad, b.Line) }}
	var got []string
	step := func(add string, want []string, offset int64, line int) {
		t.Helper()
		if add != "" {
			appendRaw(t, path, add)
		}
		got = got[:0]
		if err := r.Next(func(raw []byte) error { got = append(got, string(raw)); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after %q: lines = %q, want %q", add, got, want)
		}
		if r.Offset != offset || r.Line != line {
			t.Fatalf("after %q: Offset, Line = %d, %d; want %d, %d", add, r.Offset, r.Line, offset, line)
		}
	}
	step("", nil, 0, 0)                                   // no file yet
	step("{\"a\":1}\n", []string{`{"a":1}`}, 8, 1)        // one line
	step("", nil, 8, 1)                                   // nothing new
	step("{\"b\":", nil, 8, 1)                            // half a line: not yet
	step("2}", nil, 8, 1)                                 // still no newline
	step("\n", []string{`{"b":2}`}, 16, 2)                // completed: picked up whole
	step("oops\n{\"c\":3}\n", []string{`{"c":3}`}, 29, 4) // bad line counted, reported
	if fmt.Sprint(bad) != "[3]" {
		t.Fatalf("bad lines = %v, want [3]", bad)
	}
}

func TestReaderCallbackErrorStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	writeFile(t, path, "1\n2\n3\n")
	stop := fmt.Errorf("stop")
	r := &Reader{Path: path}
	var got []string
	err := r.Next(func(raw []byte) error {
		got = append(got, string(raw))
		if len(got) == 2 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	// The failed line counts as consumed; the next call resumes after it.
	got = nil
	if err := r.Next(func(raw []byte) error { got = append(got, string(raw)); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[3]" {
		t.Fatalf("resumed with %q, want [3]", got)
	}
}

func TestReaderOversizeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	big := `"` + strings.Repeat("x", MaxLine+10) + `"`
	data := "{\"a\":1}\n" + big + "\n{\"b\":2}\n"
	writeFile(t, path, data)
	var bad []BadLine
	r := &Reader{Path: path, Bad: func(b BadLine) { bad = append(bad, b) }}
	var got []string
	if err := r.Next(func(raw []byte) error { got = append(got, string(raw)); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != `[{"a":1} {"b":2}]` {
		t.Fatalf("lines = %.80q, want the two small ones", got)
	}
	if len(bad) != 1 || bad[0].Line != 2 || bad[0].Offset != 8 || !strings.Contains(bad[0].Reason, "size limit") {
		t.Fatalf("reports = %+v, want line 2 at offset 8 over the size limit", bad)
	}
	if r.Offset != int64(len(data)) || r.Line != 3 {
		t.Fatalf("Offset, Line = %d, %d; want %d, 3", r.Offset, r.Line, len(data))
	}
}

func TestReaderOversizeUnterminatedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	writeFile(t, path, "{\"a\":1}\n"+strings.Repeat("y", MaxLine+100))
	var bad []BadLine
	r := &Reader{Path: path, Bad: func(b BadLine) { bad = append(bad, b) }}
	n := 0
	if err := r.Next(func([]byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1 || r.Offset != 8 || len(bad) != 0 {
		t.Fatalf("lines %d, offset %d, bad %v: an unterminated tail must wait, even a long one", n, r.Offset, bad)
	}
	appendRaw(t, path, "\n{\"b\":2}\n")
	if err := r.Next(func([]byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 2 || len(bad) != 1 || bad[0].Line != 2 {
		t.Fatalf("after completing: lines %d, bad %+v", n, bad)
	}
}

func TestReadAll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	writeFile(t, path, "{\"w\":1,\"n\":1}\n{\"w\":\"str\"}\nbroken\n{\"w\":2,\"n\":2}\n{\"w\":3")
	var bad []BadLine
	got, err := ReadAll[rec](path, func(b BadLine) { bad = append(bad, b) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].W != 1 || got[1].W != 2 {
		t.Fatalf("records = %+v", got)
	}
	if len(bad) != 2 || bad[0].Line != 2 || !strings.Contains(bad[0].Reason, "does not fit") || bad[1].Line != 3 {
		t.Fatalf("reports = %+v, want line 2 (wrong type) and line 3 (malformed)", bad)
	}
	none, err := ReadAll[rec](filepath.Join(t.TempDir(), "missing"), nil)
	if err != nil || len(none) != 0 {
		t.Fatalf("missing file: %v, %v", none, err)
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		name string
		data *string
		want int
	}{
		{"missing", nil, 0},
		{"empty", ptr(""), 0},
		{"valid only", ptr("1\n2\n3\n"), 3},
		{"bad and torn not counted", ptr("1\nx\n\n2\n{\"a\""), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			if tt.data != nil {
				writeFile(t, path, *tt.data)
			}
			n, err := Count(path)
			if err != nil || n != tt.want {
				t.Fatalf("Count = %d, %v; want %d", n, err, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestBadLineString(t *testing.T) {
	tests := []struct {
		b    BadLine
		want string
	}{
		{BadLine{Path: "f", Line: 3, Offset: 10, Reason: "r"}, "f:3: skipped r"},
		{BadLine{Path: "f", Offset: 10, Reason: "r"}, "f@10: skipped r"},
	}
	for _, tt := range tests {
		if got := tt.b.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestAppendedRecordsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	in := []rec{{W: 1, N: 1, S: "plain"}, {W: 1, N: 2, S: "line\nbreak\r\n"}, {W: 1, N: 3, S: "ünïcode \u2028 \x00"}}
	for _, r := range in {
		if err := Append(path, r); err != nil {
			t.Fatal(err)
		}
	}
	out, err := ReadAll[rec](path, func(b BadLine) { t.Errorf("unexpected bad line %v", b) })
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(in)
	b, _ := json.Marshal(out)
	if !bytes.Equal(a, b) {
		t.Fatalf("round trip:\n got %s\nwant %s", b, a)
	}
}

// An unacknowledged whole record left without its newline never counts, not
// after the next append nor after any later one (issue 8 item 9).
func TestAppendNeverRevivesTornWholeRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	appendRaw(t, path, `{"w":9,"n":9}`) // whole, but its write was never acknowledged
	for i := 1; i <= 3; i++ {
		if err := Append(path, rec{N: i}); err != nil {
			t.Fatal(err)
		}
		if n, err := Count(path); err != nil || n != i {
			t.Fatalf("after %d appends Count = %d, %v", i, n, err)
		}
	}
	lines, end, err := Tail(path, 10, nil)
	if err != nil || len(lines) != 3 || end != int64(len(readFile(t, path))) {
		t.Fatalf("Tail = %d lines (end %d), %v; want the 3 appended", len(lines), end, err)
	}
}
