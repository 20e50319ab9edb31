package jsonl

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// benchRecord is shaped like a store.Event: a message posted to a phase.
type benchRecord struct {
	Time    time.Time `json:"ts"`
	Kind    string    `json:"kind"`
	Actor   string    `json:"actor"`
	TaskID  string    `json:"task_id"`
	PhaseID string    `json:"phase_id"`
	Text    string    `json:"text"`
	N       int       `json:"n"`
}

func benchRec(i int) benchRecord {
	return benchRecord{Time: time.Unix(1_700_000_000, 0).UTC(), Kind: "message.posted", Actor: "cedar_a1b2",
		TaskID: "tk-a1b2c3", PhaseID: "ph-d4e5f6", Text: "I think the hero section should lead with the benefit", N: i}
}

// benchBigLog writes a log of n lines (about 190 bytes each) in a temporary
// directory and returns its path; building it is not part of any measurement.
func benchBigLog(b *testing.B, n int) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "events.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		fmt.Fprintf(w, `{"ts":"2026-01-01T00:00:00Z","kind":"message.posted","actor":"cedar_a1b2","task_id":"tk-a1b2c3","phase_id":"ph-d4e5f6","msg_id":"msg-%06x","text":"line %d of the bus, a realistic little event"}`+"\n", i%0xffffff, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkAppend is one whole record appended under the cross-process lock:
// lock, torn-tail check, one write, unlock.
func BenchmarkAppend(b *testing.B) {
	p := filepath.Join(b.TempDir(), "log.jsonl")
	rec := benchRec(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rec.N = i
		if err := Append(p, rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendHeld is the append without taking the lock (the caller,
// e.g. phase.Say, already holds it).
func BenchmarkAppendHeld(b *testing.B) {
	p := filepath.Join(b.TempDir(), "log.jsonl")
	rec := benchRec(0)
	b.ReportAllocs()
	err := lockedfile.With(p, func() error {
		for i := 0; b.Loop(); i++ {
			rec.N = i
			if err := AppendHeld(p, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAppendParallel appends from GOMAXPROCS goroutines to one file;
// each takes the flock, so this is the in-process view of contention.
func BenchmarkAppendParallel(b *testing.B) {
	p := filepath.Join(b.TempDir(), "log.jsonl")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rec := benchRec(0)
		for pb.Next() {
			if err := Append(p, rec); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkTail reads the last 50 lines of a 1,000,000-line log: the cost of
// pm log -n 50 on a large bus. It must not depend on the file's size.
func BenchmarkTail(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			p := benchBigLog(b, n)
			b.ReportAllocs()
			for b.Loop() {
				lines, _, err := Tail(p, 50, nil)
				if err != nil || len(lines) != 50 {
					b.Fatalf("%d lines, %v", len(lines), err)
				}
			}
		})
	}
}

// BenchmarkCount counts the valid lines of a log (what phase.Say does under
// the lock to enforce message_limit). It is linear in the file: 50 lines is
// a full phase at the default limit.
func BenchmarkCount(b *testing.B) {
	for _, n := range []int{50, 1_000, 1_000_000} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			p := benchBigLog(b, n)
			st, err := os.Stat(p)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				got, err := Count(p)
				if err != nil || got != n {
					b.Fatalf("%d lines, %v", got, err)
				}
			}
		})
	}
}
