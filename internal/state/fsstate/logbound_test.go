package fsstate

import (
	"strings"
	"testing"

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
