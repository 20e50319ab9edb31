package fsstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// BenchmarkBoundCheck is the check each append of a transcript makes
// when the transcript is under its bound (a transcript of 1 MiB): the
// stat alone (docs/benchmarks.md).
func BenchmarkBoundCheck(b *testing.B) {
	root, _, err := store.Init(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	f := New(s)
	msg := map[string]string{"role": "user", "content": strings.Repeat("x", 1000)}
	for range 1000 {
		if err := f.AppendTranscript("oak_0001", msg); err != nil {
			b.Fatal(err)
		}
	}
	path := s.TranscriptPath("oak_0001")
	for b.Loop() {
		if err := f.keepBound(state.LogTranscript, path); err != nil {
			b.Fatal(err)
		}
	}
}

// A step longer than the bound has no valid cut: the file is read and
// planned once per quarter of the bound appended (state.PlanAgainAt), not
// at every append (the reviewer measured 6,000 appends of one such log:
// 80 s). Each read of the file reports its one bad line, so the reports
// count the plans.
func TestNoCutIsPlannedOncePerQuarter(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	s.Warn = &warn
	const bound = 8 << 10
	s.Config().Limits.TranscriptBytes = bound
	f := New(s)
	const name = "oak_0001"
	var calls []map[string]string
	for i := range 60 {
		calls = append(calls, map[string]string{"id": fmt.Sprint("c", i)})
	}
	if err := f.AppendTranscript(name, map[string]any{"role": "user", "content": "all at once"},
		map[string]any{"role": "assistant", "tool_calls": calls}); err != nil {
		t.Fatal(err)
	}
	if err := jsonl.Append(s.TranscriptPath(name), json.RawMessage("{}")); err != nil { // made bad below
		t.Fatal(err)
	}
	raw, err := os.ReadFile(s.TranscriptPath(name))
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw[:len(raw)-3], "{x\n"...) // the last line: not JSON
	if err := os.WriteFile(s.TranscriptPath(name), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	result := func(i int) map[string]string {
		return map[string]string{"role": "tool", "tool_call_id": fmt.Sprint("c", i), "content": strings.Repeat("r", 150)}
	}
	for i := range 50 { // ~10 KiB: over the bound
		if err := f.AppendTranscript(name, result(i)); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(warn.String(), "warning") {
		t.Fatalf("a step of ~10 KiB in %d bytes was never planned a cut of (no read reported the bad line)", bound)
	}
	warn.Reset()
	for i := 50; i < 58; i++ { // ~1.6 KiB: less than a quarter of the bound
		if err := f.AppendTranscript(name, result(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(warn.String(), "pm: warning"); n > 1 {
		t.Errorf("8 appends of ~200 bytes to a log over its bound with no cut point: %d plans, want at most 1\n%s", n, warn.String())
	}
}
