package jsonl

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Decode passes on exactly the lines Next passes on, with the same bad-line
// reports, each decoded.
func TestDecodeMatchesNext(t *testing.T) {
	type rec struct {
		ID string `json:"id"`
		N  int    `json:"n"`
	}
	cases := []struct {
		name    string
		content string
		ids     []string
	}{
		{"valid lines", "{\"id\":\"a\"}\n{\"id\":\"b\",\"n\":2}\n", []string{"a", "b"}},
		{"torn and blank lines", "{\"id\":\"a\"}\n{\"id\":\"b\n\n{\"id\":\"c\"}\n", []string{"a", "c"}},
		{"a value that does not fit", "{\"id\":\"a\",\"n\":\"x\"}\n[1]\n{\"id\":\"c\"}\n", []string{"a", "", "c"}},
		{"unterminated tail left", "{\"id\":\"a\"}\n{\"id\":\"b\"}", []string{"a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.jsonl")
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			var nextBad, decBad []BadLine
			nr := &Reader{Path: p, Bad: func(b BadLine) { nextBad = append(nextBad, b) }}
			var nextN int
			if err := nr.Next(func([]byte) error { nextN++; return nil }); err != nil {
				t.Fatal(err)
			}
			dr := &Reader{Path: p, Bad: func(b BadLine) { decBad = append(decBad, b) }}
			var got []string
			if err := Decode(dr, func(_ []byte, v *rec) error { got = append(got, v.ID); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.ids) || len(got) != nextN {
				t.Errorf("Decode ids = %q (Next passed %d), want %q", got, nextN, c.ids)
			}
			if len(decBad) != len(nextBad) || dr.Offset != nr.Offset || dr.Line != nr.Line {
				t.Errorf("Decode: %d bad, offset %d, line %d; Next: %d bad, offset %d, line %d",
					len(decBad), dr.Offset, dr.Line, len(nextBad), nr.Offset, nr.Line)
			}
			for i := range min(len(decBad), len(nextBad)) {
				if decBad[i].Line != nextBad[i].Line {
					t.Errorf("bad line %d reported at line %d, Next says %d", i, decBad[i].Line, nextBad[i].Line)
				}
			}
		})
	}
}
