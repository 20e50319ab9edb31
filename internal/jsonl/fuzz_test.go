package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var fuzzSeeds = []string{
	"",
	"\n",
	"{\"a\":1}\n",
	"{\"a\":1}\n{\"b\":",
	"{\"a\":1}\r\n\r\n  \n[1,2]\nnull\n",
	"not json\n{\"a\":1}\n{}{}\n\"unterminated\n",
	"\xff\xfe\n{\"\xff\":1}\n\"\\u00\"\n",
	"{\"a\":\"b\\nc\"}\n\n\n1 2\n3\n",
}

type readResult struct {
	lines  []string
	bad    []BadLine
	offset int64
	line   int
}

func readBytes(t *testing.T, path string, r *Reader, res *readResult) {
	t.Helper()
	r.Bad = func(b BadLine) { res.bad = append(res.bad, b) }
	if err := r.Next(func(raw []byte) error {
		res.lines = append(res.lines, string(raw))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res.offset, res.line = r.Offset, r.Line
}

// FuzzReader: arbitrary bytes never crash the reader, every emitted line is
// one valid JSON value without a newline, the offset stops right after the
// last newline, reading in two steps (the file growing in between) gives the
// same result as reading once, and Tail agrees with the lines read.
func FuzzReader(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint16(i*3), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, n uint8) {
		dir := t.TempDir()
		path := filepath.Join(dir, "x.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var once readResult
		readBytes(t, path, &Reader{Path: path}, &once)
		for _, l := range once.lines {
			if !json.Valid([]byte(l)) {
				t.Fatalf("emitted invalid JSON %q", l)
			}
			if bytes.ContainsAny([]byte(l), "\n") {
				t.Fatalf("emitted a line holding a newline: %q", l)
			}
		}
		wantOff := int64(bytes.LastIndexByte(data, '\n') + 1)
		if once.offset != wantOff {
			t.Fatalf("offset %d, want %d (just past the last newline)", once.offset, wantOff)
		}
		if once.line != bytes.Count(data, []byte{'\n'}) {
			t.Fatalf("Line %d, want %d", once.line, bytes.Count(data, []byte{'\n'}))
		}

		// Two steps: the file holds a prefix first, then the rest arrives.
		k := int(cut) % (len(data) + 1)
		path2 := filepath.Join(dir, "y.jsonl")
		if err := os.WriteFile(path2, data[:k], 0o644); err != nil {
			t.Fatal(err)
		}
		var twice readResult
		r := &Reader{Path: path2}
		readBytes(t, path2, r, &twice)
		if err := os.WriteFile(path2, data, 0o644); err != nil {
			t.Fatal(err)
		}
		readBytes(t, path2, r, &twice)
		if fmt.Sprint(once.lines) != fmt.Sprint(twice.lines) || once.offset != twice.offset || once.line != twice.line {
			t.Fatalf("reading in two steps (cut %d) differs:\nonce  %q off %d\ntwice %q off %d", k, once.lines, once.offset, twice.lines, twice.offset)
		}
		if len(once.bad) != len(twice.bad) {
			t.Fatalf("bad reports differ: %v vs %v", once.bad, twice.bad)
		}
		for i := range once.bad {
			a, b := once.bad[i], twice.bad[i]
			if a.Line != b.Line || a.Offset != b.Offset || a.Reason != b.Reason {
				t.Fatalf("bad report %d differs: %v vs %v", i, a, b)
			}
		}

		// A tiny read buffer: lines straddle refills, most are longer
		// than the buffer; the reader must hand on the same lines.
		var small readResult
		readBytes(t, path, &Reader{Path: path, bufLimit: 1 + int(n)%40}, &small)
		if fmt.Sprint(once.lines) != fmt.Sprint(small.lines) || once.offset != small.offset || once.line != small.line ||
			fmt.Sprint(once.bad) != fmt.Sprint(small.bad) {
			t.Fatalf("a %d-byte buffer reads differently:\nonce  %q off %d %v\nsmall %q off %d %v", 1+int(n)%40,
				once.lines, once.offset, once.bad, small.lines, small.offset, small.bad)
		}

		checkTail(t, path, once.lines, once.offset, int(n))
	})
}

func checkTail(t *testing.T, path string, all []string, end int64, n int) {
	t.Helper()
	var bad []BadLine
	lines, gotEnd, err := Tail(path, n, func(b BadLine) { bad = append(bad, b) })
	if err != nil {
		t.Fatal(err)
	}
	if gotEnd != end {
		t.Fatalf("Tail(%d) end %d, Reader offset %d", n, gotEnd, end)
	}
	want := lastN(all, n)
	if len(lines) != len(want) {
		t.Fatalf("Tail(%d) gave %d lines, want %d: %q vs %q", n, len(lines), len(want), lines, want)
	}
	// Tail is a suffix of what Reader yields.
	for i := range lines {
		if string(lines[i]) != want[i] {
			t.Fatalf("Tail(%d)[%d] = %q, want %q", n, i, lines[i], want[i])
		}
		if !json.Valid(lines[i]) {
			t.Fatalf("Tail emitted invalid JSON %q", lines[i])
		}
	}
	for _, b := range bad {
		if b.Offset < 0 || b.Offset >= end {
			t.Fatalf("Tail reported offset %d outside [0,%d)", b.Offset, end)
		}
	}
}

// FuzzTail: Tail never crashes, and its result is the suffix of the complete
// lines a Reader yields, for any n, with the same end offset.
func FuzzTail(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), i-1)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		path := filepath.Join(t.TempDir(), "x.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var res readResult
		readBytes(t, path, &Reader{Path: path}, &res)
		checkTail(t, path, res.lines, res.offset, n)
	})
}
