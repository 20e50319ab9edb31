package jsonl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

// A valid line whose values do not fit T is passed on, whatever error
// json.Unmarshal gives: a bad time (a *time.ParseError, not an
// UnmarshalTypeError) was reported as torn and skipped, so pm chat counted
// fewer lines than jsonl.Count and the room's limit.
func TestDecodePassesValidLinesThatDoNotFit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	lines := `{"id":"m-1","at":"2024-01-01T00:00:00Z"}` + "\n" +
		`{"id":"m-2","at":"bad"}` + "\n" +
		`{"id":"m-3","at":5}` + "\n" +
		`{"id":` + "\n"
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	type rec struct {
		ID string    `json:"id"`
		At time.Time `json:"at"`
	}
	var bad []BadLine
	var ids []string
	r := &Reader{Path: path, Bad: func(b BadLine) { bad = append(bad, b) }}
	if err := Decode(r, func(raw []byte, v *rec) error { ids = append(ids, v.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "m-1,m-2,m-3" || len(bad) != 1 || bad[0].Line != 4 {
		t.Fatalf("passed %v, reported %+v; want m-1,m-2,m-3 passed and line 4 reported", ids, bad)
	}
	n := 0
	if err := (&Reader{Path: path}).Next(func([]byte) error { n++; return nil }); err != nil || n != len(ids) {
		t.Fatalf("Next passed %d, %v; Decode passed %d", n, err, len(ids))
	}
}
