package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// fitStepwise is FitEntry as it was first written: cut the longest
// string, marshal the whole entry again, until it fits (quadratic in the
// strings cut). Kept as the reference the one-pass FitEntry must agree
// with, byte for byte.
func fitStepwise(v any, limit int) ([]byte, error) {
	limit = EntryLimit(limit)
	b, err := json.Marshal(v)
	if err != nil || len(b) <= limit {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	size := len(b)
	for size > limit {
		set, str := longestReference(&tree)
		if set == nil || len(str) < minCut {
			return nil, Errorf(ErrInvalid, "", "refused")
		}
		over := size - limit
		keep := max(0, len(str)-over-markLen(len(str), limit))
		for keep > 0 && !utf8.RuneStart(str[keep]) {
			keep--
		}
		set(str[:keep] + cutMark(len(str)-keep, limit))
		if b, err = json.Marshal(tree); err != nil {
			return nil, err
		}
		size = len(b)
	}
	return b, nil
}

// longestReference is the first longest string of the tree in the walk's
// order (sorted keys), as the stepwise cut chose it.
func longestReference(tree *any) (set func(string), str string) {
	for _, s := range stringsOf(tree) {
		if set == nil || len(s.str) > len(str) {
			set, str = s.set, s.str
		}
	}
	return set, str
}

// shapes are entries over a limit of 2000 in the ways a transcript's
// messages are: one long content, many tool calls' arguments, text that
// escapes, multi-byte text, strings of equal length, numbers kept as
// written, nothing long enough to cut.
func shapes() map[string]any {
	long := strings.Repeat("abcdefghij", 500)
	calls := []any{}
	for i := range 40 {
		calls = append(calls, map[string]any{"id": fmt.Sprint("c", i), "type": "function",
			"function": map[string]any{"name": "write", "arguments": strings.Repeat(fmt.Sprint(i%10), 300+i*7)}})
	}
	r := rand.New(rand.NewPCG(1, 2))
	mixed := map[string]any{}
	for i := range 30 {
		var sb strings.Builder
		for range r.IntN(900) {
			sb.WriteString([]string{"a", "é", "<", "\n", "\"", "\u2028", "日"}[r.IntN(7)])
		}
		mixed[fmt.Sprint("k", i)] = sb.String()
	}
	return map[string]any{
		"a long content":  map[string]any{"role": "tool", "tool_call_id": "c1", "content": long},
		"a bare string":   long,
		"many arguments":  map[string]any{"role": "assistant", "tool_calls": calls},
		"equal strings":   map[string]string{"a": long, "b": long, "c": long},
		"escaped text":    map[string]string{"content": strings.Repeat("<\n\"", 2000)},
		"multi-byte text": map[string]string{"content": strings.Repeat("é日", 1500)},
		"mixed":           mixed,
		"numbers":         map[string]any{"n": json.Number("1.50e10"), "s": long},
		"nothing to cut":  strings.Split(strings.Repeat("x", 1500), ""),
		"short strings":   []string{strings.Repeat("y", 200), strings.Repeat("y", 200), long[:1900]},
	}
}

// The one-pass cut keeps what the stepwise cut kept, byte for byte, and
// refuses what it refused: the files and the hub keep the same entries as
// before it.
func TestFitEntryMatchesTheStepwiseCut(t *testing.T) {
	multi := 0 // entries kept with more than one string cut
	for name, v := range shapes() {
		for _, limit := range []int{600, 2000, 5000} {
			want, werr := fitStepwise(v, limit)
			if werr == nil && bytes.Count(want, []byte("[pm cut ")) > 1 {
				multi++
			}
			got, err := FitEntry(v, limit)
			if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
				t.Errorf("%s, limit %d: got %d bytes (%v), want %d (%v)\n got %.200s\nwant %.200s", name, limit, len(got), err, len(want), werr, got, want)
			}
		}
	}
	if multi == 0 {
		t.Error("no shape kept with several strings cut: the cut's later steps are untested")
	}
}

// BenchmarkFitEntry cuts a 10 MiB entry to the 1 MiB bound: one long
// string, and the same bytes in 1,280 strings of 8 KiB (a message of many
// tool calls).
func BenchmarkFitEntry(b *testing.B) {
	const size = 10 << 20
	many := make([]any, 0, size/(8<<10))
	for i := range cap(many) {
		many = append(many, map[string]any{"id": fmt.Sprint(i), "arguments": strings.Repeat("a", 8<<10-40)})
	}
	for _, bc := range []struct {
		name string
		v    any
	}{
		{"one string", map[string]any{"role": "tool", "content": strings.Repeat("a", size)}},
		{"1280 strings", map[string]any{"role": "assistant", "tool_calls": many}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				if _, err := FitEntry(bc.v, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
