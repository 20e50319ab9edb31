package store

import (
	"encoding/json"
	"maps"
	"testing"
)

// seen.json decodes as encoding/json decodes it, or declines.
func TestSeenDecodeFast(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		fast bool
	}{
		{"{\n  \"ph-000001\": 3,\n  \"ph-000002\": 0\n}\n", true},
		{`{}`, true},
		{` { "ph-1" : -2 , "ph-1": 7 } `, true}, // the last wins
		{`{"é": 1}`, true},
		{`{"a\"b\u00e9": 1}`, true},
		{`{"a": 1.5}`, false},
		{`{"a": 1e2}`, false},
		{`{"a": null}`, false},
		{`{"a": "1"}`, false},
		{`{"a": 99999999999999999999}`, false},
		{`{"a": 1,}`, false},
		{`[1]`, false},
		{`{"a": 1} x`, false},
		{"{\"\xff\": 1}", false},
	} {
		var fast seen
		ok := fast.DecodeFast([]byte(tc.raw))
		if ok != tc.fast {
			t.Errorf("DecodeFast(%q) = %v, want %v", tc.raw, ok, tc.fast)
		}
		if ok {
			var want seen
			if err := json.Unmarshal([]byte(tc.raw), &want); err != nil || !maps.Equal(fast, want) {
				t.Errorf("DecodeFast(%q) = %v; encoding/json: %v, %v", tc.raw, fast, want, err)
			}
		}
	}
}

func FuzzDecodeSeen(f *testing.F) {
	f.Add([]byte("{\n  \"ph-000001\": 3\n}\n"))
	f.Add([]byte(`{"a":1,"a":2,"b":-0}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, start := range []seen{nil, {}} {
			fast := maps.Clone(start)
			if !fast.DecodeFast(raw) {
				continue
			}
			want := maps.Clone(start)
			if err := json.Unmarshal(raw, &want); err != nil || !maps.Equal(fast, want) {
				t.Fatalf("DecodeFast(%q) = %v; encoding/json: %v, %v", raw, fast, want, err)
			}
		}
	})
}
