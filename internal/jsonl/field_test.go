package jsonl

import (
	"encoding/json"
	"testing"
)

// AppendString writes what json.Marshal writes for a string, whatever the
// string: control bytes, HTML characters, invalid UTF-8, U+2028/2029.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "\x00\x01\b\f\n\r\t\x1f\x7f", "<a href='x'>&amp;</a>",
		"\xff\xfe bad", "caf\xc3", "\u2028\u2029", "héllo wörld ✓ 𝄞", "\xed\xa0\x80 surrogate"} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, json.Marshal: %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\xff", "\u2028", "\x00\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got[1:]) != string(want) {
			t.Errorf("AppendString(%q) = %s, json.Marshal: %s", s, got[1:], want)
		}
	})
}
