package jsonl

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// lastN is the reference Tail: the last n lines a Reader yields.
func lastN(all []string, n int) []string {
	if n <= 0 {
		return nil
	}
	if n > len(all) {
		n = len(all)
	}
	return all[len(all)-n:]
}

func tailStrings(t *testing.T, path string, n int) ([]string, int64, []BadLine) {
	t.Helper()
	var bad []BadLine
	lines, end, err := Tail(path, n, func(b BadLine) { bad = append(bad, b) })
	if err != nil {
		t.Fatalf("Tail(%d): %v", n, err)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return out, end, bad
}

func TestTail(t *testing.T) {
	tests := []struct {
		name    string
		data    *string
		n       int
		want    []string
		end     int64
		badOffs []int64
	}{
		{name: "missing file", n: 5, end: 0},
		{name: "empty file", data: ptr(""), n: 5, end: 0},
		{name: "n zero", data: ptr("1\n2\n"), n: 0, end: 4},
		{name: "n negative", data: ptr("1\n2\n"), n: -3, end: 4},
		{name: "last two", data: ptr("1\n2\n3\n"), n: 2, want: []string{"2", "3"}, end: 6},
		{name: "n larger than file", data: ptr("1\n2\n3\n"), n: 100, want: []string{"1", "2", "3"}, end: 6},
		{name: "unterminated final line ignored", data: ptr("1\n2\n{\"x\":"), n: 2, want: []string{"1", "2"}, end: 4},
		{name: "unterminated only line", data: ptr("{\"x\":1}"), n: 2, end: 0},
		{name: "unterminated tail, n zero: end before it", data: ptr("1\n2\n{\"x\":"), n: 0, end: 4},
		{name: "malformed skipped, reaches further back", data: ptr("1\n2\nbad\n3\n{\n"), n: 3, want: []string{"1", "2", "3"}, end: 12, badOffs: []int64{4, 10}},
		{name: "bad lines before the window not reported", data: ptr("bad\n1\n2\n"), n: 2, want: []string{"1", "2"}, end: 8},
		{name: "blank lines skipped", data: ptr("1\n\n  \n2\n\n"), n: 2, want: []string{"1", "2"}, end: 9},
		{name: "crlf", data: ptr("1\r\n2\r\n"), n: 5, want: []string{"1", "2"}, end: 6},
		{name: "only newlines", data: ptr("\n\n\n"), n: 2, end: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			if tt.data != nil {
				writeFile(t, path, *tt.data)
			}
			got, end, bad := tailStrings(t, path, tt.n)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
			if end != tt.end {
				t.Errorf("end = %d, want %d", end, tt.end)
			}
			var offs []int64
			for _, b := range bad {
				offs = append(offs, b.Offset)
				if b.Path != path {
					t.Errorf("BadLine.Path = %q", b.Path)
				}
			}
			if fmt.Sprint(offs) != fmt.Sprint(tt.badOffs) {
				t.Errorf("bad offsets = %v, want %v", offs, tt.badOffs)
			}
		})
	}
}

// A follower that starts at Tail's end sees every later line whole, even when
// Tail was called while a line was half written.
func TestTailEndThenFollow(t *testing.T) {
	for _, n := range []int{0, 1, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			writeFile(t, path, "{\"a\":1}\n{\"b\":")
			_, end, _ := tailStrings(t, path, n)
			appendRaw(t, path, "2}\n{\"c\":3}\n")
			var bad []BadLine
			r := &Reader{Path: path, Offset: end, Bad: func(b BadLine) { bad = append(bad, b) }}
			var got []string
			if err := r.Next(func(raw []byte) error { got = append(got, string(raw)); return nil }); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != `[{"b":2} {"c":3}]` || len(bad) != 0 {
				t.Fatalf("follower from %d got %q, bad %v", end, got, bad)
			}
		})
	}
}

// Lines whose sizes straddle the 64 KiB read blocks in every way: the result
// must match what a forward Reader yields, for every n.
func TestTailAcrossBlocks(t *testing.T) {
	const block = 64 << 10
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func() string{
		"random sizes": func() string {
			var b strings.Builder
			for i := 0; b.Len() < 5*block; i++ {
				fmt.Fprintf(&b, "{\"i\":%d,\"p\":%q}\n", i, strings.Repeat("p", rng.IntN(9000)))
				if i%17 == 0 {
					b.WriteString("{torn\n")
				}
			}
			return b.String()
		},
		"small lines": func() string {
			var b strings.Builder
			for i := 0; b.Len() < 3*block; i++ {
				fmt.Fprintf(&b, "%d\n", i)
			}
			return b.String()
		},
		"one line longer than a block": func() string {
			return "1\n{\"big\":\"" + strings.Repeat("b", 3*block) + "\"}\n2\n"
		},
	}
	// The first block read starts delta bytes before or after a line start.
	for _, delta := range []int{-2, -1, 0, 1, 2} {
		cases[fmt.Sprintf("line start at boundary%+d", delta)] = func() string {
			head := "{\"first\":1}\n{\"second\":2}\n"
			tail := "{\"last\":1}\n"
			padLen := block - delta - len(tail) // so the block starts at len(head)-delta
			pad := "\"" + strings.Repeat("x", padLen-3) + "\"\n"
			return head + pad + tail
		}
	}
	for name, gen := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			data := gen()
			writeFile(t, path, data)
			all, _ := readAllLines(t, path)
			ns := []int{1, 2, 3, 5, len(all) / 2, len(all) - 1, len(all), len(all) + 1}
			for i := 0; i < 20; i++ {
				ns = append(ns, 1+rng.IntN(len(all)+1))
			}
			for _, n := range ns {
				got, end, _ := tailStrings(t, path, n)
				want := lastN(all, n)
				if len(got) != len(want) {
					t.Fatalf("Tail(%d) returned %d lines, want %d", n, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("Tail(%d)[%d] = %.60q, want %.60q", n, i, got[i], want[i])
					}
				}
				if end != int64(len(data)) {
					t.Fatalf("Tail(%d) end = %d, want %d", n, end, len(data))
				}
			}
		})
	}
}

// Tail skips a line over MaxLine exactly as Reader does, so both agree.
func TestTailSkipsOversizeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	big := `"` + strings.Repeat("x", MaxLine+10) + `"`
	writeFile(t, path, "{\"a\":1}\n"+big+"\n{\"b\":2}\n")
	got, _, bad := tailStrings(t, path, 2)
	if fmt.Sprint(got) != `[{"a":1} {"b":2}]` {
		t.Fatalf("Tail = %.80q, want the two small lines", got)
	}
	if len(bad) != 1 || bad[0].Offset != 8 || !strings.Contains(bad[0].Reason, "size limit") {
		t.Fatalf("reports = %+v, want the big line at offset 8", bad)
	}
	all, _ := readAllLines(t, path)
	if fmt.Sprint(all) != fmt.Sprint(got) {
		t.Fatalf("Reader %.80q and Tail %.80q disagree", all, got)
	}
}

// Each skipped line is reported once, even when Tail needs several blocks.
func TestTailReportsEachBadLineOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	var b strings.Builder
	b.WriteString("{\"first\":1}\n")
	bads := 0
	for b.Len() < 200<<10 {
		b.WriteString("{bad " + strings.Repeat("z", 1000) + "\n")
		bads++
	}
	b.WriteString("{\"last\":1}\n")
	writeFile(t, path, b.String())
	got, _, bad := tailStrings(t, path, 2)
	if fmt.Sprint(got) != `[{"first":1} {"last":1}]` {
		t.Fatalf("Tail = %q", got)
	}
	if len(bad) != bads {
		t.Fatalf("%d reports for %d bad lines", len(bad), bads)
	}
	seen := map[int64]bool{}
	for i, r := range bad {
		if seen[r.Offset] {
			t.Fatalf("offset %d reported twice", r.Offset)
		}
		seen[r.Offset] = true
		if i > 0 && r.Offset <= bad[i-1].Offset {
			t.Fatalf("reports not oldest first: %d after %d", r.Offset, bad[i-1].Offset)
		}
	}
}
