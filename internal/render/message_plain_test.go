package render

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/store"
)

// onlyWriter hides every method but Write, so PrintMessage takes its
// general path.
type onlyWriter struct{ io.Writer }

// printBoth prints m through the fast path (a bytes.Buffer lends its
// buffer) and the general one, and reports whether the fast one was taken.
func printBoth(m store.Message) (fast, general string, plain bool) {
	var f bytes.Buffer
	var g strings.Builder
	plain = printPlain(new(bytes.Buffer), &m)
	PrintMessage(&f, m)
	PrintMessage(onlyWriter{&g}, m)
	return f.String(), g.String(), plain
}

func TestPrintPlainMatchesGeneral(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	east := time.Date(2026, 3, 4, 23, 59, 59, 0, time.FixedZone("X", 5*3600+30*60))
	cases := []struct {
		name  string
		m     store.Message
		plain bool
	}{
		{"agent", store.Message{Author: "oak_0001", Content: "ship it", Timestamp: ts}, true},
		{"agent with a role", store.Message{Author: "oak_0001", Role: "qa", Content: "a\nb\n\nc\n", Timestamp: east}, true},
		{"human", store.Message{Author: "human", Role: "lead", Content: "\tok", Timestamp: ts}, true},
		{"empty", store.Message{}, true},
		{"zero time, empty content", store.Message{Author: "a"}, true},
		{"escape in content", store.Message{Author: "a", Content: "\x1b[31mred", Timestamp: ts}, false},
		{"newline in author", store.Message{Author: "a\nb", Content: "x", Timestamp: ts}, false},
		{"tab in role", store.Message{Author: "a", Role: "q\ta", Content: "x", Timestamp: ts}, false},
		{"non-ASCII", store.Message{Author: "a", Content: "café", Timestamp: ts}, false},
		{"invalid UTF-8", store.Message{Author: "a", Content: "\xff", Timestamp: ts}, false},
		{"DEL", store.Message{Author: "a", Content: "\x7f", Timestamp: ts}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fast, general, plain := printBoth(c.m)
			if fast != general {
				t.Errorf("PrintMessage fast path %q, general %q", fast, general)
			}
			if plain != c.plain {
				t.Errorf("fast path taken = %v, want %v", plain, c.plain)
			}
		})
	}
}

// FuzzPrintMessage: the fast path prints what the general one prints, and
// so does a Printer reading the message as pm writes it.
func FuzzPrintMessage(f *testing.F) {
	f.Add("oak_0001", "qa", "a\nb\tc", int64(1_700_000_000), int32(0))
	f.Add("human", "", "\x1b]0;x\a", int64(-62135596800), int32(-3600))
	f.Fuzz(func(t *testing.T, author, role, content string, sec int64, offset int32) {
		loc := time.FixedZone("", int(offset%(24*3600)))
		m := store.Message{Author: author, Role: role, Content: content, Timestamp: time.Unix(sec, 0).In(loc)}
		if fast, general, _ := printBoth(m); fast != general {
			t.Fatalf("PrintMessage fast path %q, general %q", fast, general)
		}
		// The same message as pm writes it, read as a view (pm chat).
		m.ID = "msg-1"
		if line, err := json.Marshal(m); err == nil {
			var p Printer
			if view, general, ok := printView(t, &p, line); !ok || view != general {
				t.Fatalf("%s: Printer %q, PrintMessage %q", line, view, general)
			}
		}
	})
}

// isPlain tests eight bytes at a time: a byte needing escapes is found
// wherever it falls in a word.
func TestIsPlainEveryPosition(t *testing.T) {
	for n := range 20 {
		for at := range n + 1 {
			for _, c := range []byte{0x00, '\t', '\n', 0x1f, 0x7f, 0x80, 0xff} {
				b := []byte(strings.Repeat(" ~a", 7)[:n])
				if at < n {
					b[at] = c
				}
				for _, oneLine := range []bool{false, true} {
					want := at == n || !oneLine && (c == '\t' || c == '\n')
					if got := isPlain(string(b), oneLine); got != want {
						t.Fatalf("isPlain(%q, %v) = %v, want %v", b, oneLine, got, want)
					}
				}
			}
		}
	}
}
