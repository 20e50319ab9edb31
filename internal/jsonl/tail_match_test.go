package jsonl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TailMatch counts only the lines keep accepts, across block boundaries,
// and reports a skipped line once.
func TestTailMatch(t *testing.T) {
	var b bytes.Buffer
	for i := range 5000 {
		kind := "msg"
		if i%1000 == 0 {
			kind = "phase"
		}
		fmt.Fprintf(&b, `{"kind":%q,"i":%d,"pad":%q}`+"\n", kind, i, strings.Repeat("x", 40))
		if i == 4500 {
			b.WriteString("{torn\n")
		}
	}
	path := filepath.Join(t.TempDir(), "e.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		n    int
		kind string
		want []int // the i of each line returned
		bad  int
	}{
		{n: 3, kind: "phase", want: []int{2000, 3000, 4000}, bad: 1},
		{n: 10, kind: "phase", want: []int{0, 1000, 2000, 3000, 4000}, bad: 1},
		{n: 2, kind: "", want: []int{4998, 4999}, bad: 0},
		{n: 0, kind: "phase", want: nil, bad: 0},
	}
	for _, c := range cases {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var keep func([]byte) bool
		if c.kind != "" {
			keep = func(raw []byte) bool { return bytes.Contains(raw, []byte(`"kind":"`+c.kind+`"`)) }
		}
		bad := 0
		lines, end, err := TailMatch(f, path, c.n, keep, func(BadLine) { bad++ })
		f.Close()
		if err != nil || end != int64(b.Len()) {
			t.Fatalf("n=%d: err %v end %d", c.n, err, end)
		}
		var got []int
		for _, l := range lines {
			var i int
			if _, err := fmt.Sscanf(string(l[bytes.Index(l, []byte(`"i":`))+4:]), "%d", &i); err != nil {
				t.Fatal(err)
			}
			got = append(got, i)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) || bad != c.bad {
			t.Errorf("n=%d kind=%q: got %v (%d bad), want %v (%d bad)", c.n, c.kind, got, bad, c.want, c.bad)
		}
	}
}
